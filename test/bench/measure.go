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

// sample is the raw figures of one measured stretch. The main measurements alternate short rounds
// of the service and its baseline and merge each side's samples, so both see the same moments of a
// noisy machine.
type sample struct {
	clients  int
	ops      int
	errors   int
	firstErr string
	seconds  float64
	lat      []time.Duration
}

// add merges another stretch of the same side.
func (s *sample) add(o sample) {
	s.clients = o.clients
	s.ops += o.ops
	s.errors += o.errors
	if s.firstErr == "" {
		s.firstErr = o.firstErr
	}
	s.seconds += o.seconds
	s.lat = append(s.lat, o.lat...)
}

// measure summarizes the sample.
func (s sample) measure() Measure {
	m := Measure{Clients: s.clients, Ops: s.ops, Errors: s.errors, FirstError: s.firstErr, Seconds: round1(s.seconds)}
	if s.seconds > 0 {
		m.PerSecond = round1(float64(s.ops) / s.seconds)
	}
	m.summarize(s.lat)
	return m
}

// alternate runs rounds of each side in turn and returns each side's merged figures, in order.
func alternate(rounds int, sides ...func() (sample, error)) ([]Measure, error) {
	acc := make([]sample, len(sides))
	for range rounds {
		for i, run := range sides {
			s, err := run()
			if err != nil {
				return nil, err
			}
			acc[i].add(s)
		}
	}
	out := make([]Measure, len(acc))
	for i, s := range acc {
		out[i] = s.measure()
	}
	return out, nil
}

// drive runs clients concurrent loops of their op for d and records every call. Operations in flight
// at the deadline finish and count; the rate divides by the time until the last one finished.
func drive(ctx context.Context, clients int, d time.Duration, newOp func(client int) op) sample {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second) // a hung request must not hang the run
	defer cancel()
	var (
		mu       sync.Mutex
		s        = sample{clients: clients}
		wg       sync.WaitGroup
		start    = time.Now()
		deadline = start.Add(d)
	)
	for c := range clients {
		do := newOp(c)
		wg.Go(func() {
			var mine sample
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t := time.Now()
				err := do(ctx)
				mine.lat = append(mine.lat, time.Since(t))
				mine.ops++
				if err != nil {
					mine.errors++
					if mine.firstErr == "" {
						mine.firstErr = err.Error()
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			s.add(mine)
		})
	}
	wg.Wait()
	s.clients, s.seconds = clients, time.Since(start).Seconds()
	return s
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// ratio is a/b rounded for reports, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round2(a / b)
}
