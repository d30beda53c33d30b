// Package ratelimit holds per-key sliding 60-second windows: Limiter, kept in memory per instance
// (the Read API's best-effort limit), and Shared, kept in PostgreSQL for every instance (shared.go),
// which the Integration API draws on a lease at a time (Leased, lease.go).
//
// Limiter uses the sliding-window counter: the current fixed minute's count plus the previous minute's
// count weighted by how much of it still lies inside the window. That needs two integers per key
// instead of a timestamp per request, and is exact when traffic is even across the window.
package ratelimit

import (
	"sync"
	"time"
)

// Window is the length of the sliding window.
const Window = time.Minute

// Limiter counts requests per key.
type Limiter struct {
	mu    sync.Mutex
	keys  map[string]*counter
	now   func() time.Time
	sweep time.Time
}

type counter struct {
	start     time.Time // start of the current fixed window
	cur, prev int
}

// New returns a limiter; now is the clock (time.Now in production, a fake in tests).
func New(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{keys: map[string]*counter{}, now: now}
}

// Allow records one request for key and reports whether it is within limit requests per window.
// A rejected request is not counted, so a client that backs off regains its budget.
func (l *Limiter) Allow(key string, limit int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, used := l.used(key)
	if used >= float64(limit) {
		return false
	}
	c.cur++
	return true
}

// Exhausted reports whether key has used its limit in the current window, without counting a
// request: for limits on failures only (sign-in attempts), checked before the attempt and counted
// with Allow when it fails.
func (l *Limiter) Exhausted(key string, limit int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, used := l.used(key)
	return used >= float64(limit)
}

// used is key's counter, advanced to now, and the requests it has counted in the sliding window.
func (l *Limiter) used(key string) (*counter, float64) {
	now := l.now()
	l.forgetIdle(now)
	c := l.keys[key]
	if c == nil {
		c = &counter{start: now.Truncate(Window)}
		l.keys[key] = c
	}
	c.advance(now)
	elapsed := now.Sub(c.start)
	weight := float64(Window-elapsed) / float64(Window)
	return c, float64(c.prev)*weight + float64(c.cur)
}

func (c *counter) advance(now time.Time) {
	start := now.Truncate(Window)
	switch {
	case start.Equal(c.start):
	case start.Sub(c.start) == Window:
		c.prev, c.cur, c.start = c.cur, 0, start
	default:
		c.prev, c.cur, c.start = 0, 0, start
	}
}

// forgetIdle drops keys idle for two windows, at most once a window, so memory follows active keys.
func (l *Limiter) forgetIdle(now time.Time) {
	if now.Sub(l.sweep) < Window {
		return
	}
	l.sweep = now
	for k, c := range l.keys {
		if now.Sub(c.start) >= 2*Window {
			delete(l.keys, k)
		}
	}
}
