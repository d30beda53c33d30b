package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// row is one line of the results table: a figure of wds beside its same-run baseline and its target.
type row struct {
	What, WDS, Baseline, Ratio, Target, Met string
}

func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// rows turns results into the table printed at the end of a run and rendered into the docs.
func rows(res *Results) []row {
	var out []row
	if r := res.Read; r != nil {
		out = append(out,
			row{fmt.Sprintf("Read list throughput, %d clients", r.WDS.Clients),
				fmt.Sprintf("%.0f req/s", r.WDS.PerSecond), fmt.Sprintf("%.0f tx/s (pgbench, same SQL)", r.PGBench.PerSecond),
				fmt.Sprintf("%.2f", r.ThroughputRatio), ">= 0.80", met(r.ThroughputRatio >= 0.8)},
			row{"Read list p50 / p99", fmt.Sprintf("%.1f / %.1f ms", r.WDS.P50Ms, r.WDS.P99Ms),
				fmt.Sprintf("%.1f / %.1f ms", r.PGBench.P50Ms, r.PGBench.P99Ms), fmt.Sprintf("%.2f", r.WDS.P99Ms/r.PGBench.P99Ms),
				"p99 <= 1.2x pgbench's", met(r.WDS.P99Ms <= 1.2*r.PGBench.P99Ms)},
			row{"Read list errors", fmt.Sprintf("%d of %d", r.WDS.Errors, r.WDS.Ops),
				fmt.Sprintf("%d of %d", r.PGBench.Errors, r.PGBench.Ops), "", "0", met(r.WDS.Errors == 0)},
			row{"Last page p50 / first page p50, 1 client", fmt.Sprintf("%.2f / %.2f ms", r.LastPage.P50Ms, r.FirstPage.P50Ms),
				"", fmt.Sprintf("%.2f", r.LastFirstRatio), "<= 1.30", met(r.LastFirstRatio <= 1.3)},
		)
	}
	out = append(out, ingestRows(res.Ingest)...)
	out = append(out, feedRows(res.Feed)...)
	out = append(out, webhookRows(res.Webhooks)...)
	out = append(out, scaleRows(res.Scale)...)
	out = append(out, noisyRows(res.Noisy)...)
	for _, m := range res.Memory {
		out = append(out, row{"Peak RSS of " + m.Process, fmt.Sprintf("%.0f MB", m.PeakMB), "", "", "< 100 MB", met(m.PeakMB < 100)})
	}
	return out
}

// ingestRows hold wds to the replay of its own statements; TPC-B is a reference line without a target.
func ingestRows(r *IngestResult) []row {
	if r == nil {
		return nil
	}
	return []row{
		{fmt.Sprintf("Ingest throughput, %d clients", r.WDS.Clients), fmt.Sprintf("%.0f orders/s", r.WDS.PerSecond),
			fmt.Sprintf("%.0f tx/s (pgbench replaying a create's statements)", r.Replay.PerSecond),
			fmt.Sprintf("%.2f", r.ReplayRatio), ">= 0.75", met(r.ReplayRatio >= 0.75)},
		{"Ingest p50 / p99", fmt.Sprintf("%.1f / %.1f ms", r.WDS.P50Ms, r.WDS.P99Ms),
			fmt.Sprintf("%.1f / %.1f ms", r.Replay.P50Ms, r.Replay.P99Ms), "", "p99 < 30 ms", met(r.WDS.P99Ms < 30)},
		{"Ingest against TPC-B (reference)", fmt.Sprintf("%.0f orders/s", r.WDS.PerSecond),
			fmt.Sprintf("%.0f tx/s (pgbench TPC-B-like, scale %d), p99 %.1f ms", r.PGBench.PerSecond, r.PGBenchScale, r.PGBench.P99Ms),
			fmt.Sprintf("%.2f", r.ThroughputRatio), "", ""},
		{"Ingest errors", fmt.Sprintf("%d of %d", r.WDS.Errors, r.WDS.Ops), fmt.Sprintf("%d of %d", r.Replay.Errors, r.Replay.Ops),
			"", "0", met(r.WDS.Errors == 0)},
		{"Ingest rows in the database", r.Verified, r.ReplayVerified, "", "one order and its events per request", met(r.Verified != "")},
	}
}

func webhookRows(r *WebhookResult) []row {
	if r == nil {
		return nil
	}
	return []row{
		{"Webhook highest steady rate", fmt.Sprintf("%.1f orders/s", r.WDSMaxRate),
			fmt.Sprintf("%.1f workflows/s (bare Temporal workflow, one HTTPS POST)", r.BareMaxRate),
			fmt.Sprintf("%.2f", r.RateRatio), ">= 0.90", met(r.RateRatio >= 0.9)},
		halfRateRow(r.HalfRate),
		{"Temporal history of one delivery", historyText(r.WDSHistory),
			fmt.Sprintf("%d events: workflow tasks %d, activity tasks %d", r.BareHistory.Events, r.BareHistory.WorkflowTasks,
				r.BareHistory.Activities), fmt.Sprintf("%.1f", float64(r.WDSHistory.Events)/float64(max(1, r.BareHistory.Events))), "", ""},
		{fmt.Sprintf("Temporal requests per delivery at %d/s, by operation", asksRate), asksText(r.WDSAsks), asksText(r.BareAsks),
			fmt.Sprintf("%.2f", ratio(r.WDSAsks.TotalCalls, r.BareAsks.TotalCalls)), "", ""},
		{"Webhook events at the receiver's dedupe", fmt.Sprintf("%d events, %d missing, %d redelivered",
			r.Events, r.Missing, r.Duplicates), "", "", "each exactly once", met(r.Missing == 0 && r.Unreadable == 0)},
		{"Webhook attempts other than a first success", attemptsText(r.Attempts), "", "", "", ""},
	}
}

// scaleRows are delivery measured without the create: committed events, a backlog, waiting chains.
func scaleRows(r *ScaleResult) []row {
	if r == nil {
		return nil
	}
	d, rc, b, l, w := r.Delivery, r.Recovery, r.Backlog, r.Limited, r.Waiting
	return append(deliveryRows(d), append(append(clusterRows(r.Cluster), retryRows(r.Retry)...), []row{
		{fmt.Sprintf("Recovery of %d dropped chains, endpoint limited to %d/s", rc.Events, rc.RateLimit),
			fmt.Sprintf("all started after %.0f s (%.1f/s), delivered after %.0f s: %.1f chains/s; busiest second %d",
				rc.StartedSeconds, rc.StartedRate, rc.Seconds, rc.Rate, rc.BusiestSecond),
			fmt.Sprintf("%.1f workflows/s (bare workflow + POST, delivery only above)", rc.BareRate), fmt.Sprintf("%.2f", rc.Ratio), "", ""},
		{fmt.Sprintf("Backlog drain: %d events committed with Temporal stopped", b.Events),
			fmt.Sprintf("all delivered %.0f s after Temporal started, %.1f events/s", b.Seconds, b.Rate),
			fmt.Sprintf("%.1f events/s (delivery only, same run)", b.SteadyRate), fmt.Sprintf("%.2f", b.Ratio), ">= 0.90", met(b.Ratio >= 0.9)},
		{fmt.Sprintf("Backlog drain, endpoint limited to %d/s: %d events", l.RateLimit, l.Events),
			fmt.Sprintf("busiest second %d POSTs; %d delivered after %.0f s, %.1f/s", l.BusiestSecond, l.Delivered, l.Seconds, l.Rate),
			fmt.Sprintf("%d/s (the limit)", l.RateLimit), fmt.Sprintf("%.2f", l.Ratio), fmt.Sprintf("no second over %d", l.RateLimit),
			met(l.Delivered == l.Events && l.BusiestSecond <= l.RateLimit)},
		{fmt.Sprintf("Waiting chains: %d on the ladder's timers (receiver answering 500, ladder %s)", w.Chains, w.Ladder),
			fmt.Sprintf("peak RSS wds worker %.0f MB, Temporal server %.0f MB", w.WorkerPeakMB, w.TemporalPeakMB), "", "",
			"worker < 150 MB", met(w.WorkerPeakMB > 0 && w.WorkerPeakMB < 150)},
		{"Waiting chains: history and finish", fmt.Sprintf("%d history events a chain (timers %d, activity tasks %d, markers %d); all waiting after %.0f s; "+
			"last delivered %.0f s after the receiver recovered, %.0f s after the first retry arrived",
			w.HistoryEvents, w.History.Timers, w.History.Activities, w.History.Markers, w.SecondsToWait, w.RecoverySeconds, w.FinishSeconds), "", "", "", ""},
	}...)...)
}

// deliveryRows are the delivery-only line on the dev server with the targets of performance round 4:
// wds against the bare workflow (one regular activity that POSTs), same run, per delivered event.
func deliveryRows(d DeliveryOnly) []row {
	bare := "bare workflow + POST, same run"
	rows := []row{
		{fmt.Sprintf("Delivery only: %d committed events a round, %d rounds", d.EventsPerRound, len(d.WDS)),
			fmt.Sprintf("%.1f events/s", d.WDSRate), fmt.Sprintf("%.1f workflows/s (bare workflow + POST started per event)", d.BareRate),
			fmt.Sprintf("%.2f", d.Ratio), ">= 1.50", met(d.Ratio >= 1.5)},
		{"Delivery only: Temporal CPU per delivered event", fmt.Sprintf("%.2f ms", d.WDSTemporalCPU),
			fmt.Sprintf("%.2f ms (%s)", d.BareTemporalCPU, bare), fmt.Sprintf("%.2f", ratio(d.WDSTemporalCPU, d.BareTemporalCPU)),
			"<= 0.55", met(d.WDSTemporalCPU > 0 && d.WDSTemporalCPU <= 0.55*d.BareTemporalCPU)},
		{"Delivery only: Temporal requests per delivered event", fmt.Sprintf("%.2f", d.WDSAsks.TotalCalls),
			fmt.Sprintf("%.2f (%s)", d.BareAsks.TotalCalls, bare), fmt.Sprintf("%.2f", ratio(d.WDSAsks.TotalCalls, d.BareAsks.TotalCalls)),
			"<= 3", met(d.WDSAsks.TotalCalls > 0 && d.WDSAsks.TotalCalls <= 3)},
		{"Delivery only: history events of a delivery whose first attempt succeeds", historyText(d.WDSHistory),
			fmt.Sprintf("%s (%s)", historyText(d.BareHistory), bare), "", "<= 6", met(d.WDSHistory.Events > 0 && d.WDSHistory.Events <= 6)},
		{"Delivery only: wds worker CPU per delivered event", fmt.Sprintf("%.2f ms", d.WDSCPU["wds worker"]), "", "",
			"<= 2.5 ms", met(d.WDSCPU["wds worker"] > 0 && d.WDSCPU["wds worker"] <= 2.5)},
		postgresRow("Delivery only", d),
	}
	if lw := d.LockWaits; lw != nil {
		rows = append(rows, row{"Delivery only: an attempt's wait for a lock in wds's PostgreSQL (every attempt to one endpoint)",
			lw.String(), "", "", "p99 <= 1 ms", met(lw.P99Ms <= 1)})
	}
	return rows
}

// postgresRow is wds's PostgreSQL CPU per delivered event of a delivery-only line, the target of
// performance round 5.
func postgresRow(line string, d DeliveryOnly) row {
	return row{line + ": wds's PostgreSQL CPU per delivered event, less the benchmark's commit of the events",
		fmt.Sprintf("%.2f ms (%.2f ms with the commit)", d.DeliveryPostgres(), d.WDSCPU["postgres"]),
		fmt.Sprintf("%.2f ms (%s)", d.BareCPU["postgres"], "bare workflow + POST, same run"), "",
		"<= 1.5 ms", met(d.DeliveryPostgres() > 0 && d.DeliveryPostgres() <= 1.5)}
}

// historyText is a history's size and what it holds.
func historyText(h History) string {
	return fmt.Sprintf("%d events: workflow tasks %d, activity tasks %d, markers %d, upserts %d",
		h.Events, h.WorkflowTasks, h.Activities, h.Markers, h.Upserts)
}

// retryRows is the cost of a failing attempt followed by a ladder timer, when the run measured it.
func retryRows(r *RetryCost) []row {
	if r == nil {
		return nil
	}
	return []row{{fmt.Sprintf("A failing attempt followed by a ladder timer (%s): %d events failing once, less as many delivered at the first attempt",
		r.Ladder, r.Retries),
		fmt.Sprintf("per retry: %+d history events, %.2f Temporal requests, CPU Temporal %.2f ms, wds worker %.2f ms, PostgreSQL %.2f ms; "+
			"failing once: %s, %.2f requests, Temporal CPU %.2f ms",
			r.HistoryEvents, r.RequestsTotal, r.TemporalCPU, r.CPU["wds worker"], r.CPU["postgres"],
			retryKinds(r.FailedOnceHistory), r.FailedOnceAsks.TotalCalls, temporalCPU(r.FailedOnceCPU)),
		fmt.Sprintf("first attempt: %s, %.2f requests, Temporal CPU %.2f ms (same server and worker)",
			retryKinds(r.FirstHistory), r.FirstAsks.TotalCalls, temporalCPU(r.FirstCPU)), "", "measured", ""}}
}

// clusterRows are the delivery-only line on the cluster, beside the bare workflow on the same cluster.
func clusterRows(runs []DeliveryOnly) []row {
	var out []row
	for _, d := range runs {
		out = append(out, row{fmt.Sprintf("Delivery only on the Temporal cluster, %d history shards: %d committed events a round, %d rounds",
			d.HistoryShards, d.EventsPerRound, len(d.WDS)),
			fmt.Sprintf("%.1f events/s", d.WDSRate), fmt.Sprintf("%.1f workflows/s (bare workflow + POST, same cluster)", d.BareRate),
			fmt.Sprintf("%.2f", d.Ratio), "", ""},
			postgresRow(fmt.Sprintf("Delivery only on the cluster, %d history shards", d.HistoryShards), d))
	}
	return out
}

// temporalMarkdown sets the delivery-only line of the dev server beside the cluster's, same run: what
// a delivery costs Temporal on each (its CPU includes, on the cluster, its PostgreSQL backends').
func temporalMarkdown(b *bytes.Buffer, sc *ScaleResult) {
	if sc == nil || len(sc.Cluster) == 0 {
		return
	}
	b.WriteString("\nDelivery only, the dev server beside the cluster (same run; Temporal CPU is the server's and, on the " +
		"cluster, its PostgreSQL backends'; requests are the SDK's calls to the server during the side's rounds):\n\n" +
		"| Temporal | history shards | wds events/s | bare workflows/s | ratio | Temporal CPU ms per delivery, wds / bare | " +
		"Temporal requests per delivery, wds / bare | history events, wds / bare |\n|---|---|---|---|---|---|---|---|\n")
	for _, d := range append([]DeliveryOnly{sc.Delivery}, sc.Cluster...) {
		fmt.Fprintf(b, "| %s | %d | %.1f | %.1f | %.2f | %.2f / %.2f | %.2f / %.2f | %d / %d |\n", d.Temporal, d.HistoryShards,
			d.WDSRate, d.BareRate, d.Ratio, d.WDSTemporalCPU, d.BareTemporalCPU, d.WDSAsks.TotalCalls, d.BareAsks.TotalCalls,
			d.WDSHistory.Events, d.BareHistory.Events)
	}
}

// Merge puts the parts a partial run measured into the results of an earlier run, so a run of a few
// parts updates their lines and keeps the others'. The scale part carries its own header; the run's
// header (machine, load, source) and the peak RSS lines describe read, ingest and webhooks, so they
// are the partial run's when it measured all three, and stay the earlier run's otherwise.
func Merge(into, from *Results, parts []string) {
	for _, p := range parts {
		switch p {
		case "read":
			into.Read, into.Load = from.Read, from.Load
		case "ingest":
			into.Ingest = from.Ingest
		case "feed":
			into.Feed = from.Feed
		case "webhooks":
			into.Webhooks = from.Webhooks
		case "scale":
			into.Scale = from.Scale
		case "noisy":
			into.Noisy = from.Noisy
		}
	}
	if slices.Contains(parts, "read") && slices.Contains(parts, "ingest") && slices.Contains(parts, "webhooks") {
		into.Mode, into.Source, into.StartedAt, into.Machine = from.Mode, from.Source, from.StartedAt, from.Machine
		into.PostgreSQL, into.Cluster, into.Memory = from.PostgreSQL, from.Cluster, from.Memory
	}
}

// attemptsText lists the delivery attempts that were not a first success, or says there were none.
func attemptsText(counts []AttemptCount) string {
	if len(counts) == 0 {
		return "none"
	}
	parts := make([]string, len(counts))
	for i, a := range counts {
		cause := strings.NewReplacer("|", "/", "\n", " ").Replace(a.Error) // one table cell
		parts[i] = fmt.Sprintf("%d at attempt %d %s (%s)", a.Count, a.Attempt, a.Status, cause)
	}
	return strings.Join(parts, "; ")
}

// halfRateRow is the latency at half the highest steady rate, which needs a steady rate to exist.
func halfRateRow(p RatePoint) row {
	r := row{What: "Webhook answer-to-receipt p50 / p99 at half the highest steady rate", Target: "p50 < 150 ms, p99 < 500 ms"}
	if p.Sent == 0 {
		r.WDS, r.Met = "not measured: no steady rate", met(false)
		return r
	}
	r.What = fmt.Sprintf("Webhook answer-to-receipt p50 / p99 at %.1f/s (half the highest steady rate)", p.Rate)
	r.WDS = fmt.Sprintf("%.0f / %.0f ms (%d of %d delivered)", p.P50Ms, p.P99Ms, p.Delivered, p.Sent)
	r.Met = met(p.Delivered == p.Sent && p.P50Ms < 150 && p.P99Ms < 500)
	return r
}

// PrintTable writes the results table for a terminal.
func PrintTable(w io.Writer, res *Results) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEASUREMENT\tWDS\tBASELINE (SAME RUN)\tRATIO\tTARGET\tMET")
	for _, r := range rows(res) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.What, r.WDS, r.Baseline, r.Ratio, r.Target, strings.Trim(r.Met, "*"))
	}
	_ = tw.Flush()
}

// Save writes the results as indented JSON.
func Save(path string, res *Results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// LoadResults reads results written by Save.
func LoadResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", path, err)
	}
	return &res, nil
}

// The generated part of the document lies between these markers; everything else is written by hand.
const (
	beginMarker = "<!-- results:begin (generated by cmd/wdsbench from the results JSON; do not edit) -->"
	endMarker   = "<!-- results:end -->"
)

// Render draws the chart and replaces the document's results section. An empty path skips that output,
// and so does a run without the read part (`-only noisy`, say, into a results file that has no read
// curve yet): its section is written without a chart rather than failing after the run it measured.
func Render(res *Results, docPath, chartPath string) error {
	if res.Read == nil || len(res.Read.Curve) == 0 {
		chartPath = ""
	}
	if chartPath != "" {
		if err := drawChart(res, chartPath); err != nil {
			return err
		}
	}
	if docPath == "" {
		return nil
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	before, rest, ok1 := strings.Cut(string(doc), beginMarker)
	_, after, ok2 := strings.Cut(rest, endMarker)
	if !ok1 || !ok2 {
		return fmt.Errorf("bench: %s lacks the results markers %q and %q", docPath, beginMarker, endMarker)
	}
	chartRef := ""
	if chartPath != "" {
		if rel, err := filepath.Rel(filepath.Dir(docPath), chartPath); err == nil {
			chartRef = filepath.ToSlash(rel)
		}
	}
	out := before + beginMarker + "\n" + resultsMarkdown(res, chartRef) + endMarker + after
	if err := os.WriteFile(docPath, []byte(out), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// resultsMarkdown is the generated section: conditions, the table, the curve and the chart.
func resultsMarkdown(res *Results, chartRef string) string {
	var b bytes.Buffer
	m := res.Machine
	fmt.Fprintf(&b, "\nRun of %s (%s mode) on %d CPUs (%s), %.1f GiB, Linux %s, %s; load average %s at the start, %s at the end. "+
		"PostgreSQL %s, %s. Code measured: %s.\n\n", res.StartedAt.Format("2006-01-02 15:04 MST"), res.Mode, m.CPUs, m.CPUModel, m.MemGiB,
		m.Kernel, m.Go, m.LoadStart, m.LoadEnd, res.PostgreSQL, res.Cluster, res.Source)
	fmt.Fprintf(&b, "Loaded %d orders (%d rows with lines, payments and clients) in %.1f s, %.0f rows/s.\n\n",
		res.Load.Orders, res.Load.Rows, res.Load.Seconds, res.Load.RowsPerSec)
	if sc := res.Scale; sc != nil {
		lines := "delivery-only, recovery, backlog and waiting-chain lines"
		if sc.Retry != nil {
			lines = "delivery-only, recovery, backlog, waiting-chain and retry lines"
		}
		fmt.Fprintf(&b, "The %s: run of %s, load average %s at their start, %s at their end; "+
			"code measured: %s.\n\n", lines, sc.StartedAt.Format("2006-01-02 15:04 MST"), sc.LoadStart, sc.LoadEnd, sc.Source)
	}
	feedHeader(&b, res.Feed)
	noisyHeader(&b, res.Noisy)
	b.WriteString("| measurement | wds | baseline (same run) | ratio | target | met |\n|---|---|---|---|---|---|\n")
	for _, r := range rows(res) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.What, r.WDS, r.Baseline, r.Ratio, r.Target, r.Met)
	}
	if r := res.Read; r != nil && len(r.Curve) > 0 {
		b.WriteString("\nRead list against load (each point measured for a few seconds, wds and pgbench back to back):\n\n")
		b.WriteString("| clients | wds req/s | wds p50 | wds p99 | pgbench tx/s | pgbench p50 | pgbench p99 | ratio |\n|---|---|---|---|---|---|---|---|\n")
		for _, p := range r.Curve {
			fmt.Fprintf(&b, "| %d | %.0f | %.1f ms | %.1f ms | %.0f | %.1f ms | %.1f ms | %.2f |\n", p.Clients,
				p.WDS.PerSecond, p.WDS.P50Ms, p.WDS.P99Ms, p.PGBench.PerSecond, p.PGBench.P50Ms, p.PGBench.P99Ms,
				ratio(p.WDS.PerSecond, p.PGBench.PerSecond))
		}
	}
	if chartRef != "" {
		fmt.Fprintf(&b, "\n![Read list latency against load](%s)\n", chartRef)
	}
	ladderMarkdown(&b, res.Webhooks)
	cpuMarkdown(&b, res)
	temporalMarkdown(&b, res.Scale)
	b.WriteString("\n")
	return b.String()
}

// ladderMarkdown sums up both webhook ladders, a line each: every rate tried, its last try's p90
// and whether that was steady (a steady try ends a rate's tries). Every try is in the JSON.
func ladderMarkdown(b *bytes.Buffer, w *WebhookResult) {
	if w == nil {
		return
	}
	b.WriteString("\nWebhook ladders, each rate tried with its last try's p90 from the answer or the start to the receipt " +
		"(every try in the JSON):\n\n")
	for _, side := range []struct {
		name  string
		steps []RatePoint
	}{{"wds", w.WDSLadder}, {"bare", w.BareLadder}} {
		var parts []string
		for i, tries := 0, 1; i < len(side.steps); i, tries = i+1, tries+1 {
			p := side.steps[i]
			if i+1 < len(side.steps) && side.steps[i+1].Rate == p.Rate {
				continue // the rate's tries are consecutive: the last says how it ended
			}
			part := fmt.Sprintf("%.1f/s %.0f ms %s", p.Rate, p.P90Ms, map[bool]string{true: "steady", false: "**not steady**"}[p.Steady])
			if tries > 1 {
				part += fmt.Sprintf(" (%d tries)", tries)
			}
			parts = append(parts, part)
			tries = 0
		}
		fmt.Fprintf(b, "- %s: %s\n", side.name, strings.Join(parts, ", "))
	}
}

// cpuParts is the order of the CPU table's columns.
var cpuParts = []string{"wds serve", "wds worker", "temporal", "temporal postgres", "postgres", "wdsbench"}

// cpuMarkdown is the table of CPU milliseconds per operation by process: on two shared cores, the
// total bounds the throughput (2,000 ms of CPU a second).
func cpuMarkdown(b *bytes.Buffer, res *Results) {
	type line struct {
		what string
		cpu  map[string]float64
	}
	var lines []line
	if r := res.Read; r != nil {
		lines = append(lines, line{"Read: one page via wds", r.CPUPerPage}, line{"Read: one page via pgbench", r.CPUPerPgbenchTx})
	}
	if r := res.Ingest; r != nil {
		lines = append(lines, line{"Ingest: one order via wds", r.CPUPerOrder}, line{"Ingest baseline: one create replayed", r.CPUPerReplayTx},
			line{"Ingest reference: one TPC-B transaction", r.CPUPerTPCBTx})
	}
	if r := res.Feed; r != nil {
		lines = append(lines, line{"Feed: one page following next via wds", r.CPUPerPage},
			line{"Feed: one page following next via pgbench", r.CPUPerPgbenchTx})
	}
	if r := res.Webhooks; r != nil {
		if p, ok := lastSteady(r.WDSLadder); ok {
			lines = append(lines, line{fmt.Sprintf("Webhook: one order delivered by wds (at %.1f/s)", p.Rate), p.CPUPerItem})
		}
		if p, ok := lastSteady(r.BareLadder); ok {
			lines = append(lines, line{fmt.Sprintf("Webhook baseline: one bare workflow (at %.1f/s)", p.Rate), p.CPUPerItem})
		}
	}
	if r := res.Scale; r != nil {
		lines = append(lines, line{"Delivery only: one committed event delivered by wds", r.Delivery.WDSCPU},
			line{"Delivery only baseline: one bare workflow started and run", r.Delivery.BareCPU})
		if r.Retry != nil {
			lines = append(lines, line{"A retry: what a failing attempt and its ladder timer add to a delivery", r.Retry.CPU})
		}
		for _, d := range r.Cluster {
			lines = append(lines, line{fmt.Sprintf("Delivery only on the cluster, %d shards: one event by wds", d.HistoryShards), d.WDSCPU},
				line{fmt.Sprintf("Delivery only on the cluster, %d shards: one bare workflow", d.HistoryShards), d.BareCPU})
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\nCPU milliseconds per operation, by process (from /proc; `wdsbench` is the load generators, the " +
		"receiver, the bare worker and pgbench; `temporal postgres` is the cluster's PostgreSQL backends, which the dev " +
		"server's SQLite does in its own process):\n\n| operation | " + strings.Join(cpuParts, " | ") + " | total |\n|---|")
	b.WriteString(strings.Repeat("---|", len(cpuParts)+1) + "\n")
	for _, l := range lines {
		total := 0.0
		fmt.Fprintf(b, "| %s |", l.what)
		for _, p := range cpuParts {
			total += l.cpu[p]
			fmt.Fprintf(b, " %.2f |", l.cpu[p])
		}
		fmt.Fprintf(b, " %.2f |\n", total)
	}
}

// lastSteady is the highest steady step of a ladder.
func lastSteady(steps []RatePoint) (RatePoint, bool) {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Steady {
			return steps[i], true
		}
	}
	return RatePoint{}, false
}

// drawChart plots p50 and p99 of the read list against the number of clients, wds beside pgbench.
func drawChart(res *Results, path string) error {
	p := plot.New()
	p.Title.Text = "GET /v1/orders?limit=50: latency against load"
	p.X.Label.Text = "concurrent clients"
	p.Y.Label.Text = "latency (ms)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks(clientTicks(res.Read.Curve))
	p.Y.Min = 0
	p.Legend.Top, p.Legend.Left = true, true
	series := []struct {
		name  string
		pick  func(CurvePoint) float64
		color color.Color
		dash  bool
	}{
		{"wds p99", func(c CurvePoint) float64 { return c.WDS.P99Ms }, plotutil.Color(0), true},
		{"wds p50", func(c CurvePoint) float64 { return c.WDS.P50Ms }, plotutil.Color(0), false},
		{"pgbench p99", func(c CurvePoint) float64 { return c.PGBench.P99Ms }, plotutil.Color(1), true},
		{"pgbench p50", func(c CurvePoint) float64 { return c.PGBench.P50Ms }, plotutil.Color(1), false},
	}
	top := 0.0
	for _, s := range series {
		pts := make(plotter.XYs, len(res.Read.Curve))
		for i, c := range res.Read.Curve {
			pts[i] = plotter.XY{X: float64(c.Clients), Y: s.pick(c)}
			top = max(top, s.pick(c))
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("bench: chart: %w", err)
		}
		line.Color, points.Color = s.color, s.color
		if s.dash {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(s.name, line, points)
	}
	p.Y.Max = top * 1.35 // room for the legend above the lines
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := p.Save(8*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return fmt.Errorf("bench: chart: %w", err)
	}
	return nil
}

func clientTicks(curve []CurvePoint) []plot.Tick {
	ticks := make([]plot.Tick, len(curve))
	for i, c := range curve {
		ticks[i] = plot.Tick{Value: float64(c.Clients), Label: fmt.Sprint(c.Clients)}
	}
	return ticks
}

// PrintDelivery prints the delivery-only lines of a `-only delivery` run, the dev server's and the
// cluster's: the rates, Temporal's CPU and requests per event, the CPU per event by process and one
// delivery's history, wds beside the bare workflow, with the run's load average.
func PrintDelivery(w io.Writer, res *Results) {
	sc := res.Scale
	if sc == nil {
		return
	}
	fmt.Fprintf(w, "delivery only, load average %s at the start, %s at the end (%d CPUs, %s); code %s\n",
		sc.LoadStart, sc.LoadEnd, res.Machine.CPUs, res.Machine.CPUModel, sc.Source)
	for _, d := range append([]DeliveryOnly{sc.Delivery}, sc.Cluster...) {
		if d.EventsPerRound > 0 {
			printDeliveryLine(w, d)
		}
	}
}

func printDeliveryLine(w io.Writer, d DeliveryOnly) {
	fmt.Fprintf(w, "%s, %d history shards: %d events x %d rounds\n", d.Temporal, d.HistoryShards, d.EventsPerRound, len(d.WDS))
	fmt.Fprintf(w, "  rate: wds %.1f/s, bare %.1f/s, ratio %.2f\n", d.WDSRate, d.BareRate, d.Ratio)
	for _, side := range []struct {
		name     string
		cpu      map[string]float64
		temporal float64
		asks     Asks
		h        History
	}{{"wds", d.WDSCPU, d.WDSTemporalCPU, d.WDSAsks, d.WDSHistory}, {"bare", d.BareCPU, d.BareTemporalCPU, d.BareAsks, d.BareHistory}} {
		fmt.Fprintf(w, "  %s: Temporal CPU %.2f ms/event; CPU ms/event", side.name, side.temporal)
		for _, p := range cpuParts {
			fmt.Fprintf(w, " %s %.2f", p, side.cpu[p])
		}
		fmt.Fprintf(w, "; history %d events (workflow tasks %d, activities %d, markers %d, upserts %d); Temporal requests %s\n",
			side.h.Events, side.h.WorkflowTasks, side.h.Activities, side.h.Markers, side.h.Upserts, asksText(side.asks))
	}
	fmt.Fprintf(w, "  wds's PostgreSQL per delivered event: %.2f ms of CPU, %.2f ms of it the benchmark's commit of the events\n",
		d.WDSCPU["postgres"], d.CommitPostgres)
	if d.LockWaits != nil {
		fmt.Fprintf(w, "  lock waits: %s\n", d.LockWaits)
	}
	if d.WDSDatabase != nil {
		d.WDSDatabase.print(w)
	}
}
