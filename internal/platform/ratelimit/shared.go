package ratelimit

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Shared is a per-key sliding 60-second window kept in PostgreSQL (migration 00006), so every
// instance over one database draws on one budget. Counts are kept per second, and a second's
// bucket stops counting 60 seconds after its last admitted request: no 60-second span ever admits
// more than the limit, and a refused client that waits the 60 seconds finds its budget back.
//
// Each Allow is one round trip to one function call that serialises the key's callers with an
// advisory lock, so concurrent requests at the limit cannot both pass.
type Shared struct {
	db *gorm.DB
	// nextPurge is when (unix nanoseconds) this instance next asks the call to delete every key's
	// stale buckets; idle keys' rows would otherwise stay forever.
	nextPurge atomic.Int64
}

// NewShared returns a limiter over db.
func NewShared(db *gorm.DB) *Shared { return &Shared{db: db} }

// Allow records one request for keyID at now and reports whether it is within limit requests per
// window. A refused request is not counted, so a client that backs off regains its budget. now is
// the caller's clock, as key authentication takes it; instances' clocks must agree to well under a
// second, which NTP gives.
func (s *Shared) Allow(ctx context.Context, keyID uuid.UUID, limit int, now time.Time) (bool, error) {
	var ok bool
	err := s.db.WithContext(ctx).
		Raw(`SELECT wds_rate_limit_admit(?, ?, ?, ?)`, keyID, now, limit, s.purgeDue(now)).
		Row().Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("rate limit of key %s: %w", keyID, err)
	}
	return ok, nil
}

// lease grants up to want of keyID's budget at now, to be spent until until, and first gives back
// back requests of the lease that ended at backUntil. It reports how many it granted: fewer than
// want near the limit, 0 at it (migration 00023).
func (s *Shared) lease(ctx context.Context, keyID uuid.UUID, limit, want int, now, until time.Time, back int, backUntil time.Time) (int, error) {
	return s.callLease(ctx, keyID, limit, want, now, until, back, backUntil, s.purgeDue(now))
}

// giveBack gives back back requests of the lease of keyID that ended at backUntil, and takes none.
func (s *Shared) giveBack(ctx context.Context, keyID uuid.UUID, back int, backUntil time.Time) error {
	_, err := s.callLease(ctx, keyID, 0, 0, backUntil, backUntil, back, backUntil, false)
	return err
}

func (s *Shared) callLease(ctx context.Context, keyID uuid.UUID, limit, want int, now, until time.Time, back int, backUntil time.Time, purge bool) (int, error) {
	var granted int
	err := s.db.WithContext(ctx).
		Raw(`SELECT wds_rate_limit_lease(?, ?, ?, ?, ?, ?, ?, ?)`, keyID, now, until, limit, want, back, backUntil, purge).
		Row().Scan(&granted)
	if err != nil {
		return 0, fmt.Errorf("rate limit of key %s: %w", keyID, err)
	}
	return granted, nil
}

// purgeDue reports whether this call should also purge every key's stale buckets: about once a
// Window per instance.
func (s *Shared) purgeDue(now time.Time) bool {
	next := s.nextPurge.Load()
	return now.UnixNano() >= next && s.nextPurge.CompareAndSwap(next, now.Add(Window).UnixNano())
}
