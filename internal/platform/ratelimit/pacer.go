package ratelimit

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Pacer spaces each key's calls to at most a rate a second, with a burst of as many, by making a
// caller wait for its turn instead of refusing it: a client calling in a loop is slowed to the rate,
// and its waiting costs a goroutine, not the CPU and database turns other keys need. A caller whose
// turn is further off than maxWait is refused with ErrExceeded at once, without waiting.
type Pacer struct {
	rate    rate.Limit
	burst   int
	maxWait time.Duration
	now     func() time.Time

	mu    sync.Mutex
	keys  map[string]*pacedKey
	sweep time.Time
}

type pacedKey struct {
	limiter *rate.Limiter
	used    time.Time
}

// NewPacer paces each key to perSecond calls a second; now is the clock (nil: time.Now).
func NewPacer(perSecond int, maxWait time.Duration, now func() time.Time) *Pacer {
	if now == nil {
		now = time.Now
	}
	return &Pacer{rate: rate.Limit(perSecond), burst: perSecond, maxWait: maxWait, now: now, keys: map[string]*pacedKey{}}
}

// Delay takes key's next turn and says how long until it comes; ok is false, and no turn is taken,
// when that is beyond maxWait.
func (p *Pacer) Delay(key string) (wait time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.forgetIdle(now)
	k := p.keys[key]
	if k == nil {
		k = &pacedKey{limiter: rate.NewLimiter(p.rate, p.burst)}
		p.keys[key] = k
	}
	k.used = now
	r := k.limiter.ReserveN(now, 1)
	wait = r.DelayFrom(now)
	if wait > p.maxWait {
		r.CancelAt(now)
		return 0, false
	}
	return wait, true
}

// Wait waits for key's next turn, or fails with ErrExceeded when it is beyond maxWait, or with ctx's
// error when ctx ends first.
func (p *Pacer) Wait(ctx context.Context, key string) error {
	wait, ok := p.Delay(key)
	if !ok {
		return ErrExceeded
	}
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// forgetIdle drops keys unused for a Window, at most once a Window: an idle key's bucket is full
// again long before, so a new one is the same.
func (p *Pacer) forgetIdle(now time.Time) {
	if now.Sub(p.sweep) < Window {
		return
	}
	p.sweep = now
	for key, k := range p.keys {
		if now.Sub(k.used) >= Window {
			delete(p.keys, key)
		}
	}
}
