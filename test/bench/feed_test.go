package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestFeedSmoke runs the event feed line on a small history (3,000 events): both consumers and
// both pgbench scripts must have run without errors, and the lag's consumer must have seen every
// event the creates wrote, once. The ratios and the lag are for `make bench` to judge on a quiet
// machine, not for a test on a shared one.
func TestFeedSmoke(t *testing.T) {
	o := Smoke()
	o.Log, o.Parts = t.Output(), []string{"feed"}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Feed
	if f == nil {
		t.Fatal("no feed results")
	}
	for name, m := range map[string]Measure{"wds": f.WDS, "pgbench": f.PGBench, "poll wds": f.PollWDS, "poll pgbench": f.PollPGBench} {
		if m.Ops == 0 || m.Errors != 0 || m.P50Ms <= 0 || m.P99Ms < m.P50Ms {
			t.Errorf("%s: %+v", name, m)
		}
	}
	if f.ThroughputRatio <= 0 || f.PollRatio <= 0 || cpuTotal(f.CPUPerPage) <= 0 || cpuTotal(f.CPUPerPgbenchTx) <= 0 {
		t.Errorf("ratios %v / %v, CPU %v / %v", f.ThroughputRatio, f.PollRatio, f.CPUPerPage, f.CPUPerPgbenchTx)
	}
	for _, want := range []string{"pg_snapshot_xmin", ":xact_id", ":created_at", ":id", `\gset`, `\aset`} {
		if !strings.Contains(f.Script, want) {
			t.Errorf("walk script lacks %q:\n%s", want, f.Script)
		}
	}
	if l := f.Lag; l.Creates == 0 || l.CreateErrors != 0 || l.Events < l.Creates || l.Seen != l.Events || l.Duplicates != 0 || l.P50Ms <= 0 {
		t.Errorf("lag: %+v", l)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := Save(path, res); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if md := resultsMarkdown(loaded, ""); !strings.Contains(md, "The event feed lines: run of") ||
		!strings.Contains(md, "Feed lag from an event's commit") || !strings.Contains(md, "Feed: one page following next via pgbench") {
		t.Errorf("rendered results lack the feed lines:\n%s", md)
	}
}

// TestFeedPgbenchPage: every placeholder of the captured page becomes a pgbench variable, $10 and
// up included, the position's three by the names given in every branch, the rest constants.
func TestFeedPgbenchPage(t *testing.T) {
	pos := feedPosition{xact: 42, at: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), id: uuid.New()}
	org := uuid.New()
	st := feedStatement{sql: "SELECT $1, $2 WHERE a = $3 AND b = $4 AND (x, t, i) > ($5, $6, $7) OR b = $8 AND (x, t, i) > ($9, $10, $11) LIMIT $12",
		vars: []any{6000000, "order.created", org, "order.created", "42", pos.at, pos.id, "payment.recorded", "42", pos.at, pos.id, 51}}
	sql, defs, err := st.pgbenchPage(pos, [3]string{"x", "t", "i"})
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT :c1, :c2 WHERE a = :c3 AND b = :c4 AND (x, t, i) > (:x, :t, :i) OR b = :c8 AND (x, t, i) > (:x, :t, :i) LIMIT :c12"
	if sql != want {
		t.Errorf("sql\n%s\nwant\n%s", sql, want)
	}
	if defs["c1"] != "6000000" || defs["c3"] != org.String() || defs["c8"] != "payment.recorded" || defs["c12"] != "51" || len(defs) != 6 {
		t.Errorf("defs %v", defs)
	}
	st.vars[8] = "43" // a branch whose position is not the page's
	if _, _, err := st.pgbenchPage(pos, [3]string{"x", "t", "i"}); err == nil {
		t.Error("a branch without the position passed")
	}
}
