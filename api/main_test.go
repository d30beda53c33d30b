package api_test

import (
	"testing"

	"wds/test/pgtest"
)

// TestMain gives the package's tests one throwaway PostgreSQL cluster (pgtest.New clones a migrated
// database per test). Every test file of package api_test shares it.
func TestMain(m *testing.M) { pgtest.Main(m) }
