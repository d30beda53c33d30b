package bench

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"
)

// Measure is one measured phase: how many operations completed in how long, and their latencies.
type Measure struct {
	Clients    int     `json:"clients"`
	Ops        int     `json:"ops"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"per_second"`
	P50Ms      float64 `json:"p50_ms"`
	P90Ms      float64 `json:"p90_ms"`
	P99Ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
}

// summarize fills the latency figures from every operation's latency.
func (m *Measure) summarize(lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	m.P50Ms, m.P90Ms, m.P99Ms = ms(quantile(lat, 0.50)), ms(quantile(lat, 0.90)), ms(quantile(lat, 0.99))
	m.MaxMs = ms(lat[len(lat)-1])
}

// quantile is the nearest-rank quantile of sorted latencies.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

// op performs one request of a client; an error counts against the phase, never stops it.
type op func(ctx context.Context) error

// drive runs clients concurrent loops of their op for d and measures every call. Operations in flight
// at the deadline finish and count; the rate divides by the time until the last one finished.
func drive(ctx context.Context, clients int, d time.Duration, newOp func(client int) op) Measure {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second) // a hung request must not hang the run
	defer cancel()
	var (
		mu       sync.Mutex
		all      []time.Duration
		m        = Measure{Clients: clients}
		wg       sync.WaitGroup
		start    = time.Now()
		deadline = start.Add(d)
	)
	for c := range clients {
		do := newOp(c)
		wg.Go(func() {
			var lat []time.Duration
			var errs int
			var first string
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t := time.Now()
				err := do(ctx)
				lat = append(lat, time.Since(t))
				if err != nil {
					errs++
					if first == "" {
						first = err.Error()
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			all = append(all, lat...)
			m.Errors += errs
			if m.FirstError == "" {
				m.FirstError = first
			}
		})
	}
	wg.Wait()
	m.Seconds = time.Since(start).Seconds()
	m.Ops = len(all)
	m.PerSecond = round1(float64(m.Ops) / m.Seconds)
	m.Seconds = round1(m.Seconds)
	m.summarize(all)
	return m
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// ratio is a/b rounded for reports, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round2(a / b)
}
