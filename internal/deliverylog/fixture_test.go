package deliverylog_test

import (
	"testing"

	"wds/test/deliverytest"
)

// fixture is deliverytest's org and endpoint service.
type fixture struct{ *deliverytest.Fixture }

func newFixture(t testing.TB) *fixture { return &fixture{deliverytest.NewFixture(t)} }
