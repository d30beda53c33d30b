package feed_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/feed"
)

// errRollback makes a writer roll its transaction back: its events must never reach the feed.
var errRollback = errors.New("rolled back on purpose")

// Sixteen writers for 30 seconds, each taking its transaction id, waiting a random while and only
// then writing its events (so transactions that started first often commit last), a tenth of them
// rolled back; one consumer follows next all the while. It sees every committed event exactly once
// and no rolled-back one.
func TestEveryCommittedEventIsSeenOnceUnderConcurrentWriters(t *testing.T) {
	e := newEnv(t)
	ctx, stop := context.WithTimeout(e.ctx, 30*time.Second)
	defer stop()
	var (
		mu        sync.Mutex
		committed = map[uuid.UUID]bool{}
		rolled    = map[uuid.UUID]bool{}
		writers   sync.WaitGroup
	)
	for w := range 16 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for ctx.Err() == nil {
				var ids []uuid.UUID
				err := e.db.WithContext(e.ctx).Transaction(func(tx *gorm.DB) error {
					if err := tx.Exec(`SELECT pg_current_xact_id()`).Error; err != nil {
						return err
					}
					time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
					var err error
					if ids, err = writeEvents(e.ctx, tx, e.org, spec{events.OrderCreated, &e.store}, spec{events.PaymentRecorded, &e.store}); err != nil {
						return err
					}
					if rand.IntN(10) == 0 {
						return errRollback
					}
					return nil
				})
				mu.Lock()
				for _, id := range ids {
					switch {
					case err == nil:
						committed[id] = true
					case errors.Is(err, errRollback):
						rolled[id] = true
					}
				}
				mu.Unlock()
				if err != nil && !errors.Is(err, errRollback) {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	seen := map[uuid.UUID]int{}
	var after string
	consume := func() bool {
		p, err := e.feed.Read(e.ctx, feed.Query{OrgID: e.org, After: after, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids(t, p) {
			seen[uuid.MustParse(id)]++
		}
		after = p.Next
		return p.Done
	}
	for ctx.Err() == nil {
		if consume() {
			time.Sleep(time.Duration(rand.IntN(10)) * time.Millisecond)
		}
	}
	writers.Wait()
	for !consume() {
	}
	if len(committed) < 1000 {
		t.Fatalf("only %d events committed in 30 s: too few to prove anything", len(committed))
	}
	for id := range committed {
		if seen[id] != 1 {
			t.Errorf("committed event %s seen %d times", id, seen[id])
		}
	}
	for id, n := range seen {
		if !committed[id] {
			t.Errorf("event %s seen %d times but never committed (rolled back: %v)", id, n, rolled[id])
		}
	}
	t.Logf("%d events committed, %d rolled back, each committed one seen once", len(committed), len(rolled))
}
