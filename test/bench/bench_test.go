package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSmoke runs the whole benchmark program on tiny data: real PostgreSQL, a real `wds serve`,
// pgbench, the results JSON and the rendered docs. It asserts that every part ran and produced sane
// figures; how fast is for `make bench` to print, never for a test to judge.
func TestSmoke(t *testing.T) {
	o := Smoke()
	o.Log = t.Output()
	// TestNoisySmoke and TestFeedSmoke run theirs.
	o.Parts = slices.DeleteFunc(Parts(), func(p string) bool { return p == "noisy" || p == "feed" })
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Read
	if r == nil {
		t.Fatal("no read results")
	}
	for name, m := range map[string]Measure{"wds": r.WDS, "pgbench": r.PGBench, "first page": r.FirstPage, "last page": r.LastPage} {
		if m.Ops == 0 || m.P50Ms <= 0 || m.P99Ms < m.P50Ms {
			t.Errorf("%s: implausible measure %+v", name, m)
		}
	}
	if r.WDS.Errors != 0 || r.PGBench.Errors != 0 {
		t.Errorf("errors: wds %d (%s), pgbench %d", r.WDS.Errors, r.WDS.FirstError, r.PGBench.Errors)
	}
	if len(r.Curve) != len(o.CurveClients) {
		t.Errorf("curve has %d points, want %d", len(r.Curve), len(o.CurveClients))
	}
	if res.Load.Orders != o.Orders || len(res.Memory) != 2 || res.Memory[0].PeakMB <= 0 || res.Memory[1].PeakMB <= 0 {
		t.Errorf("load %+v, memory %+v", res.Load, res.Memory)
	}
	if in := res.Ingest; in == nil || in.WDS.Ops == 0 || in.WDS.Errors != 0 || in.PGBench.Ops == 0 || in.Verified == "" {
		t.Errorf("ingest: %+v", in)
	} else {
		checkReplay(t, in)
	}
	if w := res.Webhooks; w == nil || len(w.WDSLadder) == 0 || len(w.BareLadder) == 0 || w.Events == 0 || w.Missing != 0 {
		t.Errorf("webhooks: %+v", w)
	}
	checkScale(t, res.Scale, o)
	checkRender(t, res)
}

// checkScale checks that the delivery-only rounds, the backlog and the waiting chains all delivered
// every event and measured what they name.
func checkScale(t *testing.T, s *ScaleResult, o Options) {
	if s == nil {
		t.Fatal("no delivery scale results")
	}
	d := s.Delivery
	if len(d.WDS) != o.ScaleRounds || len(d.Bare) != o.ScaleRounds || d.WDSRate <= 0 || d.BareRate <= 0 || d.Ratio <= 0 ||
		cpuTotal(d.WDSCPU) <= 0 || cpuTotal(d.BareCPU) <= 0 {
		t.Errorf("delivery only: %+v", d)
	}
	checkDelivery(t, d, "dev server", 1)
	if len(s.Cluster) != len(o.ClusterShards) {
		t.Fatalf("cluster: %d delivery-only lines, want one for each of %v", len(s.Cluster), o.ClusterShards)
	}
	for i, c := range s.Cluster {
		checkDelivery(t, c, "temporal-server", o.ClusterShards[i])
		if _, ok := c.WDSCPU["temporal postgres"]; !ok {
			t.Errorf("cluster, %d shards: no CPU of Temporal's PostgreSQL backends: %v", c.HistoryShards, c.WDSCPU)
		}
	}
	if b := s.Backlog; b.Events != o.BacklogEvents || b.Rate <= 0 || b.SteadyRate != d.WDSRate || b.Ratio <= 0 {
		t.Errorf("backlog: %+v", b)
	}
	if rc := s.Recovery; rc.Events != o.RecoveryChains || rc.Rate <= 0 || rc.StartedRate <= 0 || rc.BareRate != d.BareRate ||
		rc.BusiestSecond <= 0 || rc.BusiestSecond > rc.RateLimit {
		t.Errorf("recovery: %+v", rc)
	}
	// The limit is what the receiver sees: a second over it is a failure, however fast the drain.
	if l := s.Limited; l.Events != o.LimitedEvents || l.Delivered != l.Events || l.BusiestSecond <= 0 || l.BusiestSecond > l.RateLimit {
		t.Errorf("rate-limited backlog: %+v", l)
	}
	if s.Retry == nil {
		t.Fatal("no retry line")
	}
	checkRetry(t, *s.Retry, o)
	w := s.Waiting
	if w.Chains != o.WaitingChains || w.WorkerPeakMB <= 0 || w.TemporalPeakMB <= 0 || w.RecoverySeconds <= 0 {
		t.Errorf("waiting chains: %+v", w)
	}
	// A chain that waited failed once, slept on a timer and then succeeded: each attempt is a local
	// activity's marker (issue 35); the starter chose the version, so no version marker.
	if w.History.Timers < 1 || w.History.Markers != 2 || w.HistoryEvents != w.History.Events {
		t.Errorf("waiting chain history: %+v", w.History)
	}
}

// checkRetry checks the retry line: every failed-once event was failed exactly once and retried, and a
// retry adds a timer, history events and requests to a delivery (how many is for the run to print).
func checkRetry(t *testing.T, r RetryCost, o Options) {
	t.Helper()
	n := o.ScaleEvents * o.ScaleRounds
	if r.Retries != n || r.FirstAsks.Items != n || r.FailedOnceAsks.Items != n || !strings.Contains(r.Temporal, ", server 1.") {
		t.Errorf("retry: %d retries, %d and %d events counted, on %q; want %d", r.Retries, r.FirstAsks.Items,
			r.FailedOnceAsks.Items, r.Temporal, n)
	}
	if r.FailedOnceHistory.Timers != r.FirstHistory.Timers+1 || r.HistoryEvents <= 0 ||
		r.HistoryEvents != r.FailedOnceHistory.Events-r.FirstHistory.Events {
		t.Errorf("retry histories: failed once %+v, first attempt %+v, %d events a retry", r.FailedOnceHistory, r.FirstHistory, r.HistoryEvents)
	}
	if r.RequestsTotal <= 0 || cpuTotal(r.FailedOnceCPU) <= 0 || r.CPU == nil {
		t.Errorf("retry: %v requests a retry, CPU %v", r.RequestsTotal, r.FailedOnceCPU)
	}
}

// checkDelivery checks one server's delivery-only line: both sides delivered, on the server and the
// shard count named, with Temporal's CPU, requests and history counted.
func checkDelivery(t *testing.T, d DeliveryOnly, server string, shards int) {
	t.Helper()
	if !strings.Contains(d.Temporal, server) || !strings.Contains(d.Temporal, ", server 1.") || d.HistoryShards != shards {
		t.Errorf("delivery only on %q, %d shards: measured on %q, %d shards", server, shards, d.Temporal, d.HistoryShards)
	}
	if d.WDSRate <= 0 || d.BareRate <= 0 || d.WDSTemporalCPU+d.BareTemporalCPU <= 0 {
		t.Errorf("delivery only on %s: rates %v / %v, Temporal CPU %v / %v", d.Temporal, d.WDSRate, d.BareRate,
			d.WDSTemporalCPU, d.BareTemporalCPU)
	}
	// Every delivery starts a workflow, by the relay or by the bare side.
	for side, a := range map[string]Asks{"wds": d.WDSAsks, "bare": d.BareAsks} {
		if a.PerItem["StartWorkflowExecution"] < 1 || a.Items != d.EventsPerRound*len(d.WDS) {
			t.Errorf("delivery only on %s, %s requests: %+v", d.Temporal, side, a)
		}
	}
	if d.WDSHistory.Events == 0 || d.BareHistory.Events == 0 {
		t.Errorf("delivery only on %s: histories %+v / %+v", d.Temporal, d.WDSHistory, d.BareHistory)
	}
	checkDatabaseCost(t, d)
	if d.CommitPostgres < 0 || d.DeliveryPostgres() <= 0 {
		t.Errorf("delivery only on %s: PostgreSQL CPU %v ms an event, %v of it the commit", d.Temporal, d.WDSCPU["postgres"], d.CommitPostgres)
	}
	if lw := d.LockWaits; lw == nil || lw.Attempts != d.EventsPerRound*len(d.WDS) || lw.P99Ms < lw.FloorMs {
		t.Errorf("delivery only on %s: lock waits %+v", d.Temporal, lw)
	}
}

// checkDatabaseCost checks that the wds side's statements were counted: every delivery writes its
// attempt's row, in a statement of its own, and the benchmark's own statements are left out.
func checkDatabaseCost(t *testing.T, d DeliveryOnly) {
	t.Helper()
	if d.WDSDatabase == nil || d.WDSDatabase.Transactions < 1 {
		t.Fatalf("delivery only on %s: no statements counted: %+v", d.Temporal, d.WDSDatabase)
	}
	var attempts float64
	for _, s := range d.WDSDatabase.Statements {
		if strings.Contains(s.Query, benchSQL) {
			t.Errorf("the benchmark's own statement counted: %s", s.Query)
		}
		if s.TopLevel && strings.Contains(s.Query, "INSERT INTO webhook_deliveries") {
			attempts += s.Calls
		}
	}
	if attempts < 1 {
		t.Errorf("delivery only on %s: %.2f attempts' writes an event, want at least 1", d.Temporal, attempts)
	}
}

// TestScaleNeedsDevServer: the scale part's other lines run on the dev server, so leaving it out of
// -temporal is an error before anything starts.
func TestScaleNeedsDevServer(t *testing.T) {
	o := Smoke()
	o.Parts, o.Temporal, o.Log = []string{"scale"}, []string{clusterServer}, t.Output()
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "-temporal") {
		t.Fatalf("err = %v", err)
	}
}

// cpuTotal is the CPU of every process: a tiny round may take less than a clock tick of one.
func cpuTotal(byProcess map[string]float64) float64 {
	total := 0.0
	for _, ms := range byProcess {
		total += ms
	}
	return total
}

// checkReplay checks that the ingest baseline was captured from the service and replayed: the
// create's transaction, a fresh external id each time, and the rows of a create per replayed one.
func checkReplay(t *testing.T, in *IngestResult) {
	if in.Replay.Ops == 0 || in.Replay.Errors != 0 || in.ReplayRatio <= 0 {
		t.Errorf("replay: %+v, ratio %v", in.Replay, in.ReplayRatio)
	}
	for _, want := range []string{"begin", "INSERT INTO orders", "commit", ":ext", `\gset`, `\startpipeline`, `\endpipeline`} {
		if !strings.Contains(in.ReplayScript, want) {
			t.Errorf("replay script lacks %q:\n%s", want, in.ReplayScript)
		}
	}
	if want := fmt.Sprintf("%d orders,", in.Replay.Ops); !strings.HasPrefix(in.ReplayVerified, want) {
		t.Errorf("replay left %q, want %q", in.ReplayVerified, want)
	}
}

// checkRender saves and reloads the results and renders them into a document and a chart.
func checkRender(t *testing.T, res *Results) {
	dir := t.TempDir()
	jsonPath, doc, chart := filepath.Join(dir, "r.json"), filepath.Join(dir, "b.md"), filepath.Join(dir, "c.png")
	if err := Save(jsonPath, res); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadResults(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, []byte("# B\n\nby hand\n\n"+beginMarker+"\nold\n"+endMarker+"\n\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Render(loaded, doc, chart); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{"by hand", "Read list throughput", "pgbench replaying a create", "](c.png)", "after",
		"Delivery only", "Delivery only on the Temporal cluster, 8 history shards", "the dev server beside the cluster",
		"temporal postgres", "Recovery of", "Backlog drain", "A failing attempt followed by a ladder timer", "endpoint limited to", "Waiting chains"} {
		if !strings.Contains(s, want) {
			t.Errorf("rendered document lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "old") {
		t.Errorf("rendered document kept the old results:\n%s", s)
	}
	if fi, err := os.Stat(chart); err != nil || fi.Size() == 0 {
		t.Errorf("chart: %v", err)
	}
}

// TestAPartialRunRendersWithoutAChart holds that a run without the read part (`-only noisy` into a
// results file with no read curve) writes its section and draws no chart, instead of failing at the
// end of the run it measured.
func TestAPartialRunRendersWithoutAChart(t *testing.T) {
	dir := t.TempDir()
	doc, chart := filepath.Join(dir, "b.md"), filepath.Join(dir, "c.png")
	if err := os.WriteFile(doc, []byte("# B\n\n"+beginMarker+"\nold\n"+endMarker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := &Results{Noisy: &NoisyResult{}}
	if err := Render(res, doc, chart); err != nil {
		t.Fatalf("a run without the read part: %v", err)
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, "old") || strings.Contains(s, "c.png") || !strings.Contains(s, "noisy-neighbour") {
		t.Errorf("rendered section:\n%s", s)
	}
	if _, err := os.Stat(chart); !os.IsNotExist(err) {
		t.Errorf("a chart was drawn without a read curve: %v", err)
	}
}
