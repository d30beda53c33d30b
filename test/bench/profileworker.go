package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"wds/internal/platform/metrics"
)

// profileWorker delivers rounds of o.ScaleEvents events through the stack's `wds worker`, as the
// delivery-only line's wds rounds do, for o.Duration, while the worker writes a CPU profile of the
// same length through its WDS_PPROF_ADDR listener; the profile goes to out. The result is the rate
// and the CPU each delivered event cost the worker, Temporal and PostgreSQL. It is how the worker's
// costs in docs/benchmarks.md were found: `wdsbench -profile worker -profile-out worker.pprof`, then
// `go tool pprof -top -cum worker.pprof`.
func (e *env) profileWorker(ctx context.Context, o Options, s *stack, out string) (ProfileResult, error) {
	if o.Duration > metrics.MaxProfile {
		return ProfileResult{}, fmt.Errorf("bench: -profile worker takes a -duration of %s at most (WDS_PPROF_ADDR's longest profile), not %s", metrics.MaxProfile, o.Duration)
	}
	t, _, err := e.hookTenant(ctx, s, "Profiled delivery", "/hook")
	if err != nil {
		return ProfileResult{}, err
	}
	// A fresh worker's first deliveries open its connections; they are not what the profile is for.
	if ids, err := commitEvents(ctx, s, t, warmUpEvents); err != nil {
		return ProfileResult{}, err
	} else if _, err := drained(ctx, s.rcv, ids, time.Now(), drainLimit(warmUpEvents)); err != nil {
		return ProfileResult{}, err
	}
	if err := e.waitIdle(ctx, s); err != nil {
		return ProfileResult{}, err
	}
	profiled := make(chan error, 1)
	go func() { profiled <- fetchProfile(ctx, s.workerPprof, o.Duration, out) }()
	before, start, delivered := s.cpu.snapshot(), time.Now(), 0
	for time.Since(start) < o.Duration {
		ids, err := commitEvents(ctx, s, t, o.ScaleEvents)
		if err == nil {
			_, err = drained(ctx, s.rcv, ids, time.Now(), drainLimit(o.ScaleEvents))
		}
		if err != nil {
			return ProfileResult{}, err
		}
		delivered += len(ids)
	}
	took, after := time.Since(start), s.cpu.snapshot()
	if err := <-profiled; err != nil {
		return ProfileResult{}, err
	}
	per := func(part string) float64 { return round2((after[part] - before[part]) / float64(max(1, delivered))) }
	return ProfileResult{Measure: Measure{Clients: 1, Ops: delivered, Seconds: round1(took.Seconds()),
		PerSecond: round1(float64(delivered) / took.Seconds())},
		WorkerCPUms: per("wds worker"), TemporalCPUms: per("temporal"), PostgresCPUms: per("postgres")}, nil
}

// fetchProfile takes a CPU profile of d from the Go process serving net/http/pprof at addr and
// writes it to out.
func fetchProfile(ctx context.Context, addr string, d time.Duration, out string) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, max(1, int(d.Seconds())))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("bench: take the worker's CPU profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("bench: take the worker's CPU profile: %d %s", resp.StatusCode, truncate(string(body), 200))
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("bench: write %s: %w", out, err)
	}
	return f.Close()
}
