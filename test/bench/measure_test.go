package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestQuantileIsNearestRank(t *testing.T) {
	lat := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.9, 9}, {0.99, 10}, {0.01, 1}} {
		if got := quantile(lat, c.q); got != c.want {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
}

func TestSamplesMergeIntoOneMeasure(t *testing.T) {
	var s sample
	s.add(sample{clients: 4, ops: 2, seconds: 1, lat: []time.Duration{time.Millisecond, 3 * time.Millisecond}})
	s.add(sample{clients: 4, ops: 2, errors: 1, firstErr: "boom", seconds: 1, lat: []time.Duration{2 * time.Millisecond, 4 * time.Millisecond}})
	m := s.measure()
	if m.Ops != 4 || m.Errors != 1 || m.FirstError != "boom" || m.PerSecond != 2 || m.P50Ms != 2 || m.MaxMs != 4 || m.Clients != 4 {
		t.Errorf("merged measure %+v", m)
	}
}

func TestNextCursorReadsOnlyTheEnvelopeTail(t *testing.T) {
	body := `{"rows":[{"id":"x","metadata":{"k":"next_cursor"}}],"next_cursor":{"at":"2026-11-22T02:49:01.445154Z","id":"5b0c4f0e-4a43-4a43-8c1d-0d2b8b1c6a11"}}`
	c, err := nextCursor([]byte(body))
	if err != nil || c == nil || c.ID.String() != "5b0c4f0e-4a43-4a43-8c1d-0d2b8b1c6a11" || c.At.Nanosecond() != 445154000 {
		t.Fatalf("nextCursor = %+v, %v", c, err)
	}
	if c, err := nextCursor([]byte(`{"rows":[],"next_cursor":null}`)); err != nil || c != nil {
		t.Errorf("last page: %+v, %v", c, err)
	}
	if _, err := nextCursor([]byte(`{"error":"rate_limited"}`)); err == nil {
		t.Error("an answer without next_cursor must be an error")
	}
}

func TestReadScriptMapsTheListParameters(t *testing.T) {
	sql := "SELECT t.id FROM orders t WHERE t.org_id = $1 AND (t.updated_at, t.id) < ($2, $3) ORDER BY t.updated_at DESC, t.id DESC LIMIT $4"
	got := readScript(sql)
	want := "WHERE t.org_id = :org AND (t.updated_at, t.id) < (:updated_at, :id) ORDER BY t.updated_at DESC, t.id DESC LIMIT :lim \\aset"
	if !strings.Contains(got, want) || strings.Contains(got, "$") {
		t.Errorf("script:\n%s", got)
	}
}

func TestParsePgbench(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "read-16")
	log := "0 0 1500 0 1763000000 1\n1 0 2500 0 1763000000 2\n0 1 failed 0 1763000000 3\n"
	if err := os.WriteFile(prefix+".123", []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	out := "number of transactions actually processed: 2\nnumber of failed transactions: 1 (33.333%)\n" +
		"tps = 100.0 (without initial connection time)\n"
	s, err := parsePgbench(out, prefix, 16)
	if err != nil {
		t.Fatal(err)
	}
	m := s.measure()
	if m.Ops != 2 || m.Errors != 1 || m.PerSecond != 100 || m.P50Ms != 1.5 || m.MaxMs != 2.5 {
		t.Errorf("pgbench measure %+v", m)
	}
	if _, err := os.Stat(prefix + ".123"); !os.IsNotExist(err) {
		t.Error("the log file should be removed once read")
	}
}

// TestMergeReplacesOnlyTheRunParts: a partial run's lines replace the saved ones of its parts, and
// the saved lines of the other parts stay.
func TestMergeReplacesOnlyTheRunParts(t *testing.T) {
	saved := &Results{Mode: "full", Read: &ReadResult{ThroughputRatio: 0.7}, Scale: &ScaleResult{Source: "old"}}
	run := &Results{Mode: "full", Scale: &ScaleResult{Source: "new"}}
	Merge(saved, run, []string{"scale"})
	if saved.Read == nil || saved.Read.ThroughputRatio != 0.7 {
		t.Errorf("read lines lost: %+v", saved.Read)
	}
	if saved.Scale == nil || saved.Scale.Source != "new" {
		t.Errorf("scale lines not replaced: %+v", saved.Scale)
	}
	if saved.Source != "" {
		t.Errorf("a scale-only run took the header: %q", saved.Source)
	}
	Merge(saved, &Results{Source: "commit new", Memory: []Memory{{Process: "wds serve"}}}, []string{"read", "ingest", "webhooks"})
	if saved.Source != "commit new" || len(saved.Memory) != 1 {
		t.Errorf("a run of read, ingest and webhooks did not take the header and memory: %+v", saved)
	}
}
