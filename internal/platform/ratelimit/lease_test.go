package ratelimit

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/test/pgtest"
)

// syncClock is a test clock several goroutines read.
type syncClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *syncClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *syncClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// countCalls counts the statements db sends that read a row: every limiter call is one.
func countCalls(t *testing.T, db *gorm.DB) *atomic.Int64 {
	t.Helper()
	n := &atomic.Int64{}
	if err := db.Callback().Row().Before("gorm:row").Register("test:count", func(*gorm.DB) { n.Add(1) }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLeasedTwoInstancesHammeringOneKey: two instances send far more than a key's 600 a minute for
// three minutes. No 60 seconds hold more than 600 admitted requests, each minute is close to 600,
// both instances get their part, and the database sees a small fraction of the requests.
func TestLeasedTwoInstancesHammeringOneKey(t *testing.T) {
	db := pgtest.New(t)
	calls := countCalls(t, db)
	c := &syncClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	instances := []*Leased{NewLeased(db), NewLeased(db)}
	k := uuid.New()
	const (
		limit   = 600
		step    = 25 * time.Millisecond
		span    = 3 * Window
		perStep = 2 // concurrent requests per instance per step: 160 a second offered
	)
	var (
		mu       sync.Mutex
		admitted []time.Duration
		per      [2]int
		offered  int
	)
	for at := time.Duration(0); at < span; at += step {
		var wg sync.WaitGroup
		for i, in := range instances {
			for range perStep {
				wg.Go(func() {
					ok, err := in.Allow(context.Background(), k, limit, c.now())
					if err != nil {
						t.Error(err)
					}
					if ok {
						mu.Lock()
						admitted = append(admitted, at)
						per[i]++
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		offered += len(instances) * perStep
		c.add(step)
	}
	if n, from := busiestMinute(admitted); n > limit {
		t.Fatalf("%d requests admitted in the 60 s from %s, limit %d", n, from, limit)
	}
	for m := range 3 {
		n := 0
		for _, at := range admitted {
			if at >= time.Duration(m)*Window && at < time.Duration(m+1)*Window {
				n++
			}
		}
		if n < limit*95/100 {
			t.Errorf("minute %d admitted %d of the limit %d while both instances were busy", m, n, limit)
		}
	}
	if per[0] < limit/4 || per[1] < limit/4 {
		t.Errorf("instances admitted %v: one was starved", per)
	}
	if n := calls.Load(); n > int64(offered/20) {
		t.Errorf("%d database calls for %d requests (%d admitted): leases should save most of them", n, offered, len(admitted))
	}
	t.Logf("%d requests offered, %d admitted (%v per instance), %d database calls", offered, len(admitted), per, calls.Load())
}

// budgetUsed is what PostgreSQL counts against key now.
func budgetUsed(t *testing.T, db *gorm.DB, key uuid.UUID) int {
	t.Helper()
	var n int
	if err := db.Raw(`SELECT coalesce(sum(n), 0) FROM rate_limit_hits WHERE key_id = ?`, key).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLeasedGivesBackWhatItDidNotSpend: an instance that took a lease and fell quiet gives back the
// rest when the lease's life is over, and the other instance can then spend the whole remaining
// budget.
func TestLeasedGivesBackWhatItDidNotSpend(t *testing.T) {
	db := pgtest.New(t)
	c := &syncClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a, b := NewLeased(db), NewLeased(db)
	k := uuid.New()
	allow := func(in *Leased) bool {
		ok, err := in.Allow(context.Background(), k, 600, c.now())
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	// Leases of 1, 2, 4 and 8 spent whole, then one of MaxLease of which a spends one.
	for i := range 16 {
		if !allow(a) {
			t.Fatalf("request %d refused", i+1)
		}
	}
	if got, want := budgetUsed(t, db, k), 15+MaxLease(600); got != want {
		t.Fatalf("PostgreSQL counts %d, want the 15 spent and a lease of %d", got, MaxLease(600))
	}
	deadline := time.Now().Add(10 * time.Second)
	for budgetUsed(t, db, k) != 16 {
		if time.Now().After(deadline) {
			t.Fatalf("the unspent part of the lease was not given back: %d counted", budgetUsed(t, db, k))
		}
		time.Sleep(20 * time.Millisecond)
	}
	got := 0
	for range 700 {
		if allow(b) {
			got++
		}
	}
	if got != 600-16 {
		t.Fatalf("the other instance admitted %d, want the %d a left", got, 600-16)
	}
}

// TestLeasedFailsClosedWhenItNeedsALease: with the database unreachable an instance admits what
// its lease still holds, and then refuses with the database's error, counting nothing.
func TestLeasedFailsClosedWhenItNeedsALease(t *testing.T) {
	url := pgtest.URL(t)
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &syncClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := NewLeased(db)
	k := uuid.New()
	for range 16 { // up to a lease of MaxLease with one spent
		if ok, err := l.Allow(context.Background(), k, 600, c.now()); !ok || err != nil {
			t.Fatalf("refused while warming: %v", err)
		}
	}
	if err := database.Close(db); err != nil {
		t.Fatal(err)
	}
	for i := range MaxLease(600) - 1 {
		if ok, err := l.Allow(context.Background(), k, 600, c.now()); !ok || err != nil {
			t.Fatalf("request %d of the lease refused without the database: %v", i+1, err)
		}
	}
	ok, err := l.Allow(context.Background(), k, 600, c.now())
	if ok || err == nil {
		t.Fatalf("admitted %v, error %v once the lease was spent and the database gone; want an error", ok, err)
	}
}

// busiestMinute returns the most requests admitted in any 60 seconds, and when those began.
func busiestMinute(admitted []time.Duration) (int, time.Duration) {
	admitted = slices.Sorted(slices.Values(admitted))
	most, from := 0, time.Duration(0)
	for i, j := 0, 0; i < len(admitted); i++ {
		for j < len(admitted) && admitted[j] < admitted[i]+Window {
			j++
		}
		if j-i > most {
			most, from = j-i, admitted[i]
		}
	}
	return most, from
}

// TestLeasedCountsALeaseUntilItsEnd: a lease may be spent until its end, so it counts against the
// window until 60 seconds after its end, not after it was granted. Here the last of a lease is spent
// 0.9 s after the grant, the rest of the budget at the grant: 60.05 s after the grant nothing more
// may pass, though 60 seconds have gone since most requests.
func TestLeasedCountsALeaseUntilItsEnd(t *testing.T) {
	db := pgtest.New(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &syncClock{t: t0}
	a, b := NewLeased(db), NewLeased(db)
	k := uuid.New()
	var admitted []time.Duration
	send := func(in *Leased, n int) {
		for range n {
			ok, err := in.Allow(context.Background(), k, 600, c.now())
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				admitted = append(admitted, c.now().Sub(t0))
			}
		}
	}
	send(a, 16) // leases of 1, 2, 4, 8 spent whole, then one of 10 with one spent
	c.add(900 * time.Millisecond)
	send(a, MaxLease(600)-1)
	c.t = t0
	send(b, 700)
	if len(admitted) != 600 {
		t.Fatalf("admitted %d in the first second, want the whole budget of 600", len(admitted))
	}
	c.t = t0.Add(Window + 50*time.Millisecond)
	send(a, 700)
	send(b, 700)
	if n, from := busiestMinute(admitted); n > 600 {
		t.Fatalf("%d requests admitted in the 60 s from %s, limit 600", n, from)
	}
}

// TestLeasedGivesBackOnceWhenTheRenewalsAnswerIsLost: a renewal's call gives back what the ended lease
// did not spend; when that call commits but its answer is lost (the connection drops after the
// commit), the request fails, and nothing gives the same requests back a second time: neither the
// lease's timer nor the next renewal. A give-back may be lost, leaving requests counted until they
// age out (the safe direction); it may never count twice.
func TestLeasedGivesBackOnceWhenTheRenewalsAnswerIsLost(t *testing.T) {
	db := pgtest.New(t)
	var armed, struck atomic.Bool
	// Once armed, the next lease call that gives something back runs and commits, then its caller
	// reads an error instead of the answer.
	err := db.Callback().Row().After("gorm:row").Register("test:answer-lost", func(tx *gorm.DB) {
		row, ok := tx.Statement.Dest.(*sql.Row)
		if !ok || !strings.Contains(tx.Statement.SQL.String(), "wds_rate_limit_lease") || len(tx.Statement.Vars) < 6 {
			return
		}
		if back, _ := tx.Statement.Vars[5].(int); back == 0 || !armed.CompareAndSwap(true, false) {
			return
		}
		var granted int
		if err := row.Scan(&granted); err != nil {
			t.Errorf("the lease call itself failed: %v", err)
		}
		struck.Store(true)
		tx.Statement.Dest = tx.Statement.ConnPool.QueryRowContext(tx.Statement.Context, "SELECT 1/0")
	})
	if err != nil {
		t.Fatal(err)
	}
	c := &syncClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a := NewLeased(db)
	k := uuid.New()
	for i := range 16 { // leases of 1, 2, 4 and 8 spent whole, then one of MaxLease with one spent
		if ok, err := a.Allow(context.Background(), k, 600, c.now()); !ok || err != nil {
			t.Fatalf("request %d: %v %v", i+1, ok, err)
		}
	}
	lease := MaxLease(600)
	if got := budgetUsed(t, db, k); got != 15+lease {
		t.Fatalf("PostgreSQL counts %d, want %d", got, 15+lease)
	}
	// The lease ends on the requests' clock; the next request gives back its unspent part and takes
	// a lease of one, and its answer is lost.
	c.add(LeaseLife)
	armed.Store(true)
	if ok, err := a.Allow(context.Background(), k, 600, c.now()); ok || err == nil {
		t.Fatalf("admitted %v, error %v; want the lost answer's error", ok, err)
	}
	if !struck.Load() {
		t.Fatal("the renewal gave nothing back: the lease's timer ran first (a very slow machine?)")
	}
	want := 16 + 1 // the 16 admitted, and the lease of one the lost call granted
	if got := budgetUsed(t, db, k); got != want {
		t.Fatalf("PostgreSQL counts %d after the lost answer, want %d", got, want)
	}
	time.Sleep(LeaseLife + 500*time.Millisecond) // the ended lease's timer has run
	if got := budgetUsed(t, db, k); got != want {
		t.Fatalf("PostgreSQL counts %d once the lease's timer ran, want %d: the give-back ran twice", got, want)
	}
	c.add(LeaseLife)
	if ok, err := a.Allow(context.Background(), k, 600, c.now()); !ok || err != nil {
		t.Fatalf("the next request: %v %v", ok, err)
	}
	if got := budgetUsed(t, db, k); got != want+1 {
		t.Fatalf("PostgreSQL counts %d after the next request, want %d: it gave back again", got, want+1)
	}
}
