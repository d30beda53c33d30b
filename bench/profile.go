package bench

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"time"

	"wds/api"
	"wds/apikeys"
	"wds/webhooks"
)

// Profile serves the API in this process, wired as `wds serve` wires it (the after-commit starter
// on the run's Temporal dev server), drives one measurement at it and writes a CPU profile of the
// whole process (API, GORM, load generator) to out. what is "read" or "ingest". It is how the causes
// in docs/benchmarks.md were found: `wdsbench -profile read -profile-out read.pprof`, then
// `go tool pprof -top -cum read.pprof`.
func Profile(ctx context.Context, o Options, what, out string) (Measure, error) {
	if what != "read" && what != "ingest" {
		return Measure{}, fmt.Errorf("bench: -profile takes read or ingest, not %q", what)
	}
	e, err := newEnv(ctx, o)
	if err != nil {
		return Measure{}, err
	}
	defer e.close()
	s, err := e.startStack(ctx, o)
	if err != nil {
		return Measure{}, err
	}
	lastUsed := apikeys.NewLastUsed(s.db, quietLog())
	flushCtx, stopFlush := context.WithCancel(ctx)
	defer stopFlush()
	go lastUsed.Run(flushCtx)
	starter := &webhooks.Starter{DB: s.db, Temporal: s.temporal.Client(), Schedule: []time.Duration{time.Minute}, Log: quietLog()}
	router, err := api.NewRouter(api.Deps{DB: s.db, Log: quietLog(), LastUsed: lastUsed, Box: s.box, Events: starter})
	if err != nil {
		return Measure{}, fmt.Errorf("bench: %w", err)
	}
	srv := httptest.NewServer(router)
	defer srv.Close()
	newOp, err := e.profileLoad(ctx, o, s, what, srv.URL)
	if err != nil {
		return Measure{}, err
	}
	drive(ctx, o.Clients, o.Warmup, newOp)
	f, err := os.Create(out)
	if err != nil {
		return Measure{}, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return Measure{}, fmt.Errorf("bench: %w", err)
	}
	m := drive(ctx, o.Clients, o.Duration, newOp).measure()
	pprof.StopCPUProfile()
	return m, nil
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
