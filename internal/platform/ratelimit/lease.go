package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// LeaseLife is how long an instance may spend a lease of more than one request. A lease counts in
// PostgreSQL as spent at its end, so the shorter it lives, the sooner what it admitted ages out;
// and what it did not spend is given back when it ends, so the shorter it lives, the sooner an
// idle instance's share returns to the others.
const LeaseLife = time.Second

// refusalHold is how long an instance refuses a key by itself after PostgreSQL granted it nothing,
// so that a client hammering a key at its limit costs one database call a second per instance, not
// one per request. Budget freed meanwhile (requests aging out, another instance giving back) is
// taken at most this late.
const refusalHold = time.Second

// giveBackTimeout bounds a give-back nobody waits for.
const giveBackTimeout = 5 * time.Second

// MaxLease is the most an instance takes of a key's budget at once: one second's share of the
// minute's limit (10 of the default 600), and one request below 120 a minute, where every request
// is counted in PostgreSQL as it comes. A larger lease saves round trips only for a key busier than
// its limit allows anyway, and holds more of the budget away from the other instances.
func MaxLease(limit int) int { return max(1, limit/60) }

// Leased is the Integration API's limiter: the sliding 60-second window of Shared, every instance
// drawing on one budget, but taken a lease at a time. A key's first request on an instance takes a
// lease of one; a lease spent whole by a busy key makes the next twice as large, up to MaxLease,
// otherwise the next is as large as the last was used, so a quiet key costs one call per request,
// exactly as Shared alone, and a busy one a call per MaxLease requests. What a lease did not spend is given
// back when it ends: with the next lease's call, or by a timer when the key falls quiet.
type Leased struct {
	shared *Shared

	mu    sync.Mutex
	keys  map[uuid.UUID]*keyLease
	sweep time.Time
}

// keyLease is one key's lease on this instance.
type keyLease struct {
	turn chan struct{} // held while a request spends or renews: one at a time, cancellable

	granted, spent int
	given          bool      // what it did not spend was given back: it is over
	until          time.Time // the lease may be spent before until (the requests' clock)
	refusedUntil   time.Time // PostgreSQL granted nothing: refuse until then without asking
	id             uint64    // which lease, so a late timer leaves a newer one alone
}

// unspent is what the lease holds that it may still spend or must give back.
func (k *keyLease) unspent() int {
	if k.given {
		return 0
	}
	return k.granted - k.spent
}

// NewLeased returns a limiter over db.
func NewLeased(db *gorm.DB) *Leased {
	return &Leased{shared: NewShared(db), keys: map[uuid.UUID]*keyLease{}}
}

// Allow admits one request of keyID at now within limit requests per sliding 60 seconds, as
// Shared.Allow does, and fails closed the same way: when it needs a lease and PostgreSQL cannot
// grant one, the error says why and the request is not admitted. A refused request is not counted.
func (l *Leased) Allow(ctx context.Context, keyID uuid.UUID, limit int, now time.Time) (bool, error) {
	k := l.entry(keyID, now)
	select {
	case k.turn <- struct{}{}:
	case <-ctx.Done():
		return false, fmt.Errorf("rate limit of key %s: %w", keyID, ctx.Err())
	}
	defer func() { <-k.turn }()
	switch {
	case k.unspent() > 0 && now.Before(k.until):
		k.spent++
		return true, nil
	case now.Before(k.refusedUntil):
		return false, nil
	}
	return l.renew(ctx, keyID, k, limit, now)
}

// renew gives back what the ended lease did not spend and takes the next, spending one of it.
func (l *Leased) renew(ctx context.Context, keyID uuid.UUID, k *keyLease, limit int, now time.Time) (bool, error) {
	back, want := k.unspent(), k.nextSize(limit, now)
	until := now // a lease of one is spent at once
	if want > 1 {
		until = now.Add(LeaseLife)
	}
	var granted int
	if want == 1 && back == 0 {
		ok, err := l.shared.Allow(ctx, keyID, limit, now)
		if err != nil {
			return false, err
		}
		if ok {
			granted = 1
		}
	} else {
		// The call gives back what the ended lease did not spend, so from here on that lease holds
		// nothing, whatever the call answers: when its answer is lost after it committed, neither the
		// lease's timer nor the next renewal may give the same requests back again. A give-back lost
		// with a call that did not commit leaves them counted until they age out: the safe direction.
		k.given = true
		var err error
		if granted, err = l.shared.lease(ctx, keyID, limit, want, now, until, back, k.until); err != nil {
			return false, err
		}
	}
	k.id++
	k.granted, k.spent, k.given, k.until = granted, 0, false, until
	if granted == 0 {
		k.refusedUntil = now.Add(refusalHold)
		return false, nil
	}
	k.spent = 1
	if granted > 1 {
		l.giveBackLater(keyID, k, k.id)
	}
	return true, nil
}

// nextSize sizes the next lease at now from how the last one went: twice what it spent when it was
// spent whole and the key still asks within a lease's life of its end (it is busy), what it spent
// otherwise; between 1 and MaxLease. A key asking less than once a second stays at leases of one.
func (k *keyLease) nextSize(limit int, now time.Time) int {
	size := max(1, k.spent)
	if k.granted > 0 && k.spent == k.granted && now.Before(k.until.Add(LeaseLife)) {
		size *= 2
	}
	return min(size, MaxLease(limit))
}

// giveBackLater ends lease id when its life is over and gives back what it did not spend, unless
// a request renewed it first (and gave back itself). A give-back that fails leaves the requests
// counted until they age out: the safe direction.
func (l *Leased) giveBackLater(keyID uuid.UUID, k *keyLease, id uint64) {
	time.AfterFunc(LeaseLife, func() {
		ctx, cancel := context.WithTimeout(context.Background(), giveBackTimeout)
		defer cancel()
		select {
		case k.turn <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-k.turn }()
		back := k.unspent()
		if k.id != id || back == 0 {
			return
		}
		k.given = true
		_ = l.shared.giveBack(ctx, keyID, back, k.until)
	})
}

// entry returns keyID's lease record, and about once a Window forgets keys with nothing left to
// spend or give back, so memory follows active keys.
func (l *Leased) entry(keyID uuid.UUID, now time.Time) *keyLease {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.sweep) >= Window {
		l.sweep = now
		for id, k := range l.keys {
			select {
			case k.turn <- struct{}{}:
				if now.Sub(k.until) >= Window && !now.Before(k.refusedUntil) && k.unspent() == 0 {
					delete(l.keys, id)
				}
				<-k.turn
			default: // in use
			}
		}
	}
	k := l.keys[keyID]
	if k == nil {
		k = &keyLease{turn: make(chan struct{}, 1)}
		l.keys[keyID] = k
	}
	return k
}
