package temporalcluster

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"wds/test/pgtest"
)

var clusters atomic.Int64

// ForTest starts a cluster for one test on the test binary's PostgreSQL (pgtest), in databases of its
// own so tests never share Temporal state, and stops it when the test ends. A failed test gets the
// tail of the server's log.
func ForTest(t testing.TB, o Options) *Cluster {
	t.Helper()
	n := clusters.Add(1)
	if o.Postgres == "" {
		o.Postgres = pgtest.ServerURL(t)
	}
	if o.DBName == "" {
		o.DBName, o.VisibilityDBName = fmt.Sprintf("temporal_%d", n), fmt.Sprintf("temporal_visibility_%d", n)
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	c, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("Temporal server log (%s), last lines:\n%s", c.LogFile, tail(c.LogFile, 60))
		}
	})
	return c
}
