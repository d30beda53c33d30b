package eventsearch_test

import (
	"testing"

	"wds/test/deliverytest"
	"wds/test/pgtest"
)

// Every test of the package that needs PostgreSQL clones the template database pgtest migrates once.
func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is deliverytest's org and webhook services.
type fixture struct{ *deliverytest.Fixture }

func newFixture(t testing.TB) *fixture { return &fixture{deliverytest.NewFixture(t)} }
