package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"wds/api"
	"wds/internal/apikeys"
	"wds/internal/dispatch"
	"wds/test/apitest"
)

// ProfileResult is the profiled measurement, how many SQL statements each request ran, and the CPU
// milliseconds a request cost PostgreSQL and this process (API and load generator). Throughput moves
// with the neighbours' load on a shared machine; CPU per request moves far less, so it is the figure
// to compare before and after a change.
type ProfileResult struct {
	Measure
	StatementsPerOp float64
	PostgresCPUms   float64
	ProcessCPUms    float64
	ServeCPUms      float64 // wds serve's, when o.ProfileServe
	WorkerCPUms     float64 // wds worker's, a delivered event, when the worker is profiled
	TemporalCPUms   float64 // the Temporal dev server's, a delivered event, when the worker is profiled
}

// Profile serves the API in this process, wired as `wds serve` wires it (the after-commit starter
// on the run's Temporal dev server), drives one measurement at it and writes a CPU profile of the
// whole process (API, GORM, load generator) to out. what is "read" or "ingest". It is how the causes
// in docs/benchmarks.md were found: `wdsbench -profile read -profile-out read.pprof`, then
// `go tool pprof -top -cum read.pprof`.
//
// With o.ProfileServe the load goes to the run's `wds serve` instead, as in the full run: an API in
// the load generator's own process shares its Go scheduler and hid a tail the separate process has.
// The profile then covers the load generator only, and the SQL statement count is not known.
//
// what "worker" profiles `wds worker` instead (profileWorker).
func Profile(ctx context.Context, o Options, what, out string) (ProfileResult, error) {
	if what != "read" && what != "ingest" && what != "worker" {
		return ProfileResult{}, fmt.Errorf("bench: -profile takes read, ingest or worker, not %q", what)
	}
	e, err := newEnv(ctx, o)
	if err != nil {
		return ProfileResult{}, err
	}
	defer e.close()
	s, err := e.startStack(ctx, o)
	if err != nil {
		return ProfileResult{}, err
	}
	if what == "worker" {
		return e.profileWorker(ctx, o, s, out)
	}
	lastUsed := apikeys.NewLastUsed(s.db, quietLog())
	flushCtx, stopFlush := context.WithCancel(ctx)
	defer stopFlush()
	go lastUsed.Run(flushCtx)
	var statements atomic.Int64
	if err := countStatements(s.db, &statements); err != nil {
		return ProfileResult{}, err
	}
	starter := &dispatch.Starter{DB: s.db, Temporal: s.temporal.Client(), Schedule: []time.Duration{time.Minute}, Log: quietLog()}
	// Wired as `wds serve` wires it: keys served from a cache kept in step by its listener.
	stores, keys := apitest.Services(s.db, s.box, starter), apikeys.NewCache()
	api.CacheKeys(&stores, keys)
	go keys.Listen(flushCtx, apikeys.ConnectURL(s.dbURL), apikeys.NotifyDB(s.db), quietLog())
	router, err := api.NewRouter(api.Deps{Services: stores, Log: quietLog(), LastUsed: lastUsed})
	if err != nil {
		return ProfileResult{}, fmt.Errorf("bench: %w", err)
	}
	srv := httptest.NewServer(router)
	defer srv.Close()
	base := srv.URL
	if o.ProfileServe {
		base = s.base
	}
	newOp, err := e.profileLoad(ctx, o, s, what, base)
	if err != nil {
		return ProfileResult{}, err
	}
	drive(ctx, o.Clients, o.Warmup, newOp)
	if err := analyze(ctx, s.dbURL); err != nil {
		return ProfileResult{}, err
	}
	f, err := os.Create(out)
	if err != nil {
		return ProfileResult{}, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return ProfileResult{}, fmt.Errorf("bench: %w", err)
	}
	statements.Store(0)
	before := s.cpu.snapshot()
	m := drive(ctx, o.Clients, o.Duration, newOp).measure()
	after := s.cpu.snapshot()
	pprof.StopCPUProfile()
	perReq := func(part string) float64 { return round2((after[part] - before[part]) / float64(max(1, m.Ops))) }
	return ProfileResult{Measure: m, StatementsPerOp: round1(float64(statements.Load()) / float64(max(1, m.Ops))),
		PostgresCPUms: perReq("postgres"), ProcessCPUms: perReq("wdsbench"), ServeCPUms: perReq("wds serve")}, nil
}

// countStatements counts every SQL statement GORM sends on db (BEGIN and COMMIT are not counted).
func countStatements(db *gorm.DB, n *atomic.Int64) error {
	count := func(*gorm.DB) { n.Add(1) }
	cb := db.Callback()
	return errors.Join(
		cb.Create().After("gorm:create").Register("wdsbench:count", count),
		cb.Query().After("gorm:query").Register("wdsbench:count", count),
		cb.Update().After("gorm:update").Register("wdsbench:count", count),
		cb.Delete().After("gorm:delete").Register("wdsbench:count", count),
		cb.Row().After("gorm:row").Register("wdsbench:count", count),
		cb.Raw().After("gorm:raw").Register("wdsbench:count", count),
	)
}

// profileLoad prepares the data of the profiled measurement and returns its clients' operation.
func (e *env) profileLoad(ctx context.Context, o Options, s *stack, what, base string) (func(int) op, error) {
	if what == "read" {
		r, err := e.prepareRead(ctx, o, s, &Results{})
		if err != nil {
			return nil, err
		}
		r.base = base
		return func(c int) op { return r.walker(uint64(c)) }, nil
	}
	t, err := newTenant(ctx, s.db, "Profiled ingest")
	if err != nil {
		return nil, err
	}
	g, err := newIngester(ctx, s.db, s.box, t, base, "profile-", ingestBudget(o), true)
	if err != nil {
		return nil, err
	}
	return func(int) op { return func(ctx context.Context) error { _, err := g.create(ctx); return err } }, nil
}
