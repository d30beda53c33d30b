package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"wds/internal/platform/durations"
	"wds/internal/platform/problem"
)

// Pacer spaces each key's calls to at most a rate a second, with a burst of as many, and runs one of
// a key's calls at a time, by making a caller wait for its turn instead of refusing it: a client
// calling in a loop is slowed to the rate, and however costly each call, a key holds one of the
// resources its calls use (a database turn) while other keys' calls take the rest. Waiting costs a
// goroutine. A caller whose turn is further off than maxWait is refused with ErrExceeded at once, and
// one that waited maxWait for the key's running call to end gives up with ErrExceeded.
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
	running chan struct{} // holds a token while one of the key's calls runs
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
	wait, _, _, ok = p.reserve(key)
	return wait, ok
}

func (p *Pacer) reserve(key string) (time.Duration, *pacedKey, *rate.Reservation, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.forgetIdle(now)
	k := p.keys[key]
	if k == nil {
		k = &pacedKey{limiter: rate.NewLimiter(p.rate, p.burst), running: make(chan struct{}, 1)}
		p.keys[key] = k
	}
	k.used = now
	r := k.limiter.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if wait > p.maxWait {
		r.CancelAt(now)
		return 0, nil, nil, false
	}
	return wait, k, r, true
}

// giveBack returns a turn its caller gave up waiting for, and marks the key used now: a key is not
// forgotten, and its running token with it, while one of its calls still runs.
func (p *Pacer) giveBack(k *pacedKey, r *rate.Reservation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if r != nil {
		r.CancelAt(now)
	}
	k.used = now
}

// Wait waits for key's next turn and for its running call to end, and returns the function that
// ends this one's run; it fails with ErrExceeded when the turn is beyond maxWait or the running call
// outlasts it, or with ctx's error when ctx ends first.
func (p *Pacer) Wait(ctx context.Context, key string) (done func(), err error) {
	wait, k, r, ok := p.reserve(key)
	if !ok {
		return nil, ErrExceeded
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		p.giveBack(k, r)
		return nil, ctx.Err()
	}
	t.Reset(p.maxWait)
	select {
	case k.running <- struct{}{}:
		return func() { <-k.running; p.giveBack(k, nil) }, nil
	case <-t.C:
		return nil, ErrExceeded
	case <-ctx.Done():
		return nil, ctx.Err()
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

// Take is Wait for a paced service: a nil p paces nothing, and a turn refused is ErrExceeded with a
// detail that names what waits for it ("this org's event searches").
func (p *Pacer) Take(ctx context.Context, key, what string) (done func(), err error) {
	if p == nil {
		return func() {}, nil
	}
	done, err = p.Wait(ctx, key)
	if errors.Is(err, ErrExceeded) {
		return nil, problem.Fail(ErrExceeded, "%s run one at a time at a set pace, and this one would wait more than %s for its turn; retry after 60 seconds", what, durations.Text(p.maxWait))
	}
	if err != nil {
		return nil, fmt.Errorf("wait for the turn of %s: %w", what, err)
	}
	return done, nil
}
