package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// clocked is a limiter asked at the time of a test clock.
type clocked struct {
	*Shared
	now func() time.Time
}

func newClocked(db *gorm.DB, now func() time.Time) clocked { return clocked{NewShared(db), now} }

func (s clocked) allow(ctx context.Context, key uuid.UUID, limit int) (bool, error) {
	return s.Allow(ctx, key, limit, s.now())
}

// admit calls Allow and fails the test on a database error.
func admit(t testing.TB, s clocked, key uuid.UUID, limit int) bool {
	t.Helper()
	ok, err := s.allow(context.Background(), key, limit)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// admitted counts how many of n sequential requests pass.
func admitted(t testing.TB, s clocked, key uuid.UUID, limit, n int) int {
	t.Helper()
	got := 0
	for range n {
		if admit(t, s, key, limit) {
			got++
		}
	}
	return got
}

func TestSharedLimitPerKeyAndRefusalsNotCounted(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := newClocked(pgtest.New(t), c.now)
	k, other := uuid.New(), uuid.New()
	if got := admitted(t, s, k, 5, 12); got != 5 {
		t.Fatalf("admitted %d of 12 at limit 5", got)
	}
	if got := admitted(t, s, other, 5, 5); got != 5 {
		t.Fatalf("another key admitted %d of 5: keys must be independent", got)
	}
	// The seven refusals above and these are not counted: a minute after the five admissions the
	// whole budget is back.
	c.t = c.t.Add(30 * time.Second)
	if got := admitted(t, s, k, 5, 20); got != 0 {
		t.Fatalf("admitted %d within the window", got)
	}
	c.t = c.t.Add(30 * time.Second)
	if got := admitted(t, s, k, 5, 6); got != 5 {
		t.Fatalf("admitted %d of 6 after the window, want 5: refused requests were counted", got)
	}
}

// TestSharedWindowIsExact60Seconds: a request counts for 60 seconds after the last admission of its
// second and no longer, and no 60-second span admits more than the limit even across second
// boundaries (what the two-bucket estimate of the in-memory limiter gets wrong).
func TestSharedWindowIsExact60Seconds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 10, 900_000_000, time.UTC) // hh:mm:10.9
	c := &clock{t: t0}
	s := newClocked(pgtest.New(t), c.now)
	k := uuid.New()
	if got := admitted(t, s, k, 3, 3); got != 3 {
		t.Fatalf("admitted %d of 3", got)
	}
	for _, d := range []time.Duration{100 * time.Millisecond, 59100 * time.Millisecond, 59999 * time.Millisecond} {
		c.t = t0.Add(d) // 11.0 is the next second, 70.0 its 60th successor, 70.899 still inside
		if admit(t, s, k, 3) {
			t.Fatalf("admitted %v after the limit was reached", d)
		}
	}
	c.t = t0.Add(Window)
	if got := admitted(t, s, k, 3, 4); got != 3 {
		t.Fatalf("admitted %d of 4 exactly 60 s later, want 3", got)
	}
}

// TestSharedWindowSlides: requests spread over the minute age out one by one.
func TestSharedWindowSlides(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &clock{t: t0}
	s := newClocked(pgtest.New(t), c.now)
	k := uuid.New()
	for i := range 4 { // at 0, 20, 40, 60 s: the fourth ages the first out at exactly 60 s
		c.t = t0.Add(time.Duration(i) * 20 * time.Second)
		if !admit(t, s, k, 3) {
			t.Fatalf("request at %ds refused", i*20)
		}
	}
	c.t = t0.Add(79 * time.Second)
	if admit(t, s, k, 3) {
		t.Fatal("admitted at 79 s with 20, 40 and 60 s still in the window")
	}
	c.t = t0.Add(80 * time.Second)
	if !admit(t, s, k, 3) {
		t.Fatal("refused at 80 s after the 20 s request aged out")
	}
}

// TestSharedConcurrentAtLimit: concurrent requests of one key from many connections never
// overshoot, which a sum taken without the lock (READ COMMITTED snapshots) would. Several keys in
// turn, because an unlocked sum overshoots only when two calls interleave just so.
func TestSharedConcurrentAtLimit(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	db := pgtest.New(t)
	// Two limiters over one database are two instances.
	instances := []clocked{newClocked(db, c.now), newClocked(db, c.now)}
	for round := range 10 {
		k := uuid.New()
		var wg sync.WaitGroup
		var ok, failed atomic.Int64
		for i := range 50 {
			wg.Go(func() {
				got, err := instances[i%2].allow(context.Background(), k, 20)
				if err != nil {
					failed.Add(1)
				}
				if got {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if failed.Load() != 0 || ok.Load() != 20 {
			t.Fatalf("round %d: 50 concurrent requests at limit 20: %d admitted, %d errors; want 20 and 0", round, ok.Load(), failed.Load())
		}
	}
}

// TestSharedPurgesIdleKeys: stale buckets of keys nobody calls any more are deleted about once a
// minute by whichever key calls, so the table holds only recent buckets.
func TestSharedPurgesIdleKeys(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &clock{t: t0}
	db := pgtest.New(t)
	s := newClocked(db, c.now)
	idle, busy := uuid.New(), uuid.New()
	for i := range 3 {
		c.t = t0.Add(time.Duration(i) * time.Second)
		admit(t, s, idle, 10)
	}
	if n := rows(t, db, idle); n != 3 {
		t.Fatalf("idle key has %d buckets, want 3", n)
	}
	c.t = t0.Add(63 * time.Second) // the first call purged at 0 s, so the next is due at 60 s
	admit(t, s, busy, 10)
	if n := rows(t, db, idle); n != 0 {
		t.Fatalf("idle key still has %d buckets after a purge", n)
	}
	for _, sec := range []int{64, 65, 122} { // before 123 s no purge is due
		c.t = t0.Add(time.Duration(sec) * time.Second)
		admit(t, s, busy, 10)
	}
	if n := rows(t, db, busy); n != 4 {
		t.Fatalf("busy key has %d buckets, want 4: a purge ran before it was due", n)
	}
	c.t = t0.Add(124 * time.Second) // purges what ended by 64 s
	admit(t, s, busy, 10)
	if n := rows(t, db, busy); n != 3 {
		t.Fatalf("busy key has %d buckets, want the 65, 122 and 124 s ones", n)
	}
}

func rows(t testing.TB, db *gorm.DB, key uuid.UUID) int64 {
	t.Helper()
	var n int64
	if err := db.Raw(`SELECT count(*) FROM rate_limit_hits WHERE key_id = ?`, key).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// BenchmarkSharedAllow measures one decision, one round trip to a local PostgreSQL: admitted (the
// insert or increment of the second's bucket) and refused (the sum alone).
func BenchmarkSharedAllow(b *testing.B) {
	s := NewShared(pgtest.New(b))
	for _, bc := range []struct {
		name  string
		limit int
	}{{"admit", 1 << 30}, {"refuse", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			k := uuid.New()
			for b.Loop() {
				if _, err := s.Allow(context.Background(), k, bc.limit, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
