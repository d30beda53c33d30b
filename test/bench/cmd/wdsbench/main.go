// Command wdsbench is `make bench`: it measures the service against same-run baselines, prints the
// figures, writes them as JSON and renders docs/benchmarks.md's results and chart from them.
//
//	wdsbench                 full run (a million orders, 16 clients, 20 s per measurement)
//	wdsbench -smoke          a few seconds on tiny data
//	wdsbench -only scale     only these parts' lines, merged into the saved results
//	wdsbench -only feed -feed-events 100000 -duration 8s -results /tmp/feed.json -doc "" -chart ""   the feed line, short
//	wdsbench -smoke -only delivery -scale-events 300 -scale-rounds 2   the delivery-only line, printed
//	wdsbench -only delivery -temporal cluster -cluster-shards 8       the same on the cluster alone
//	wdsbench -render-only    re-render the docs from the saved JSON
//	wdsbench -profile read   CPU profile of the API serving the read load in this process
//	wdsbench -profile ingest -profile-serve   the same load on a separate wds serve, as the full run
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"wds/test/bench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "wdsbench:", err)
		os.Exit(1)
	}
}

func run() error {
	smoke := flag.Bool("smoke", false, "a few seconds on tiny data instead of the full run")
	wds := flag.String("wds", "", "a built wds binary (default: build ./cmd/wds)")
	keep := flag.Bool("keep", false, "keep the run's directory (cluster, process logs)")
	out := flag.String("results", "docs/benchmarks/results.json", "where to write the results")
	doc := flag.String("doc", "docs/benchmarks.md", "document whose results section is rendered (empty: none)")
	chart := flag.String("chart", "docs/benchmarks/read-latency.png", "chart of latency against load")
	renderOnly := flag.Bool("render-only", false, "render -doc and -chart from -results without measuring")
	orders := flag.Int("orders", 0, "orders to load (default: the mode's)")
	feedEvents := flag.Int("feed-events", 0, "events in the feed line's history (default: the mode's)")
	duration := flag.Duration("duration", 0, "length of each main measurement (default: the mode's)")
	scaleEvents := flag.Int("scale-events", 0, "events a delivery-only round (default: the mode's)")
	scaleRounds := flag.Int("scale-rounds", 0, "delivery-only rounds (default: the mode's)")
	profile := flag.String("profile", "", "read or ingest: profile the API in this process instead of measuring; worker: profile wds worker delivering")
	profileOut := flag.String("profile-out", "cpu.pprof", "where -profile writes the CPU profile")
	profileServe := flag.Bool("profile-serve", false, "-profile drives a separate wds serve (the profile covers the load generator only)")
	temporal := flag.String("temporal", strings.Join(bench.TemporalServers(), ","),
		"comma-separated Temporal servers the delivery-only line runs on, of "+strings.Join(bench.TemporalServers(), ","))
	shards := flag.String("cluster-shards", "1,8", "comma-separated history shard counts of the cluster, one cluster each")
	only := flag.String("only", "", "comma-separated parts to run, of "+strings.Join(bench.Parts(), ",")+
		" (default: all); their lines replace those in -results, the others stay")
	flag.Parse()

	o := bench.Full()
	if *smoke {
		o = bench.Smoke()
	}
	o.WDSBinary, o.Keep, o.ProfileServe = *wds, *keep, *profileServe
	if *only != "" {
		o.Parts = strings.Split(*only, ",")
		for _, p := range o.Parts {
			if !slices.Contains(bench.Parts(), p) {
				return fmt.Errorf("-only: unknown part %q (parts: %s)", p, strings.Join(bench.Parts(), ", "))
			}
		}
	}
	if err := temporalFlags(&o, *temporal, *shards); err != nil {
		return err
	}
	if *orders > 0 {
		o.Orders = *orders
	}
	if *feedEvents > 0 {
		o.FeedEvents = *feedEvents
	}
	if *duration > 0 {
		o.Duration = *duration
	}
	if *scaleEvents > 0 {
		o.ScaleEvents = *scaleEvents
	}
	if *scaleRounds > 0 {
		o.ScaleRounds = *scaleRounds
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *profile != "" {
		m, err := bench.Profile(ctx, o, *profile, *profileOut)
		if err != nil {
			return err
		}
		if *profile == "worker" {
			fmt.Printf("worker: %d events delivered in %.0f s (%.1f/s); CPU a delivered event: wds worker %.2f ms, "+
				"Temporal %.2f ms, PostgreSQL %.2f ms; the worker's CPU profile in %s\n", m.Ops, m.Seconds, m.PerSecond,
				m.WorkerCPUms, m.TemporalCPUms, m.PostgresCPUms, *profileOut)
			return nil
		}
		fmt.Printf("%s, %d clients: %.0f/s, p50 %.1f ms, p99 %.1f ms, %d errors, %.1f SQL statements a request, "+
			"CPU a request: PostgreSQL %.2f ms, wds serve %.2f ms, this process %.2f ms; CPU profile in %s\n",
			*profile, m.Clients, m.PerSecond, m.P50Ms, m.P99Ms, m.Errors, m.StatementsPerOp,
			m.PostgresCPUms, m.ServeCPUms, m.ProcessCPUms, *profileOut)
		return nil
	}
	if !*renderOnly {
		res, err := bench.Run(ctx, o)
		if err != nil {
			return err
		}
		if slices.Equal(o.Parts, []string{"delivery"}) {
			bench.PrintDelivery(os.Stdout, res)
			return nil
		}
		bench.PrintTable(os.Stdout, res)
		if len(o.Parts) > 0 {
			if res, err = mergeSaved(*out, res, o.Parts); err != nil {
				return err
			}
		}
		if err := bench.Save(*out, res); err != nil {
			return err
		}
	}
	res, err := bench.LoadResults(*out)
	if err != nil {
		return err
	}
	return bench.Render(res, *doc, *chart)
}

// temporalFlags sets the servers the delivery-only line runs on and the cluster's shard counts.
func temporalFlags(o *bench.Options, servers, shards string) error {
	o.Temporal = strings.Split(servers, ",")
	for _, s := range o.Temporal {
		if !slices.Contains(bench.TemporalServers(), s) {
			return fmt.Errorf("-temporal: unknown server %q (servers: %s)", s, strings.Join(bench.TemporalServers(), ", "))
		}
	}
	o.ClusterShards = nil
	for _, s := range strings.Split(shards, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("-cluster-shards: %q is not a shard count", s)
		}
		o.ClusterShards = append(o.ClusterShards, n)
	}
	return nil
}

// mergeSaved puts a partial run's parts into the results saved at path, when there are any.
func mergeSaved(path string, res *bench.Results, parts []string) (*bench.Results, error) {
	saved, err := bench.LoadResults(path)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	bench.Merge(saved, res, parts)
	return saved, nil
}
