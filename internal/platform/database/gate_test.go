package database_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/internal/platform/metrics"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open returns a handle on a fresh database that admits n transactions at once.
func open(t *testing.T, n int) *gorm.DB {
	t.Helper()
	db, err := database.Open(context.Background(), pgtest.URL(t), nil, database.Concurrency(n))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	return db
}

// hold begins a transaction and keeps it open until the returned function is called.
func hold(t *testing.T, db *gorm.DB) (end func()) {
	t.Helper()
	begun, done, ended := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		ended <- db.Transaction(func(tx *gorm.DB) error {
			close(begun)
			<-done
			return tx.Exec("SELECT 1").Error
		})
	}()
	select {
	case <-begun:
	case err := <-ended:
		t.Fatalf("hold: %v", err)
	}
	return func() {
		close(done)
		if err := <-ended; err != nil {
			t.Error(err)
		}
	}
}

func TestNoMoreThanTheLimitOfTransactionsRunAtOnce(t *testing.T) {
	db := open(t, 3)
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			err := db.Transaction(func(tx *gorm.DB) error {
				n := running.Add(1)
				defer running.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				return tx.Exec("SELECT pg_sleep(0.05)").Error
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := most.Load(); got != 3 {
		t.Fatalf("%d transactions ran at once, want 3", got)
	}
	// Statements outside transactions are not held up by open ones.
	end := hold(t, db)
	defer end()
	end2 := hold(t, db)
	defer end2()
	end3 := hold(t, db)
	defer end3()
	within(t, time.Second, func() error { return db.Exec("SELECT 1").Error })
}

func TestWaitingTransactionsBeginInArrivalOrder(t *testing.T) {
	db := open(t, 1)
	end := hold(t, db)
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := range 5 {
		wg.Go(func() {
			err := db.Transaction(func(tx *gorm.DB) error {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				return tx.Exec("SELECT 1").Error
			})
			if err != nil {
				t.Error(err)
			}
		})
		for database.Waiting(db) < i+1 { // waiter i queues before waiter i+1 arrives
			time.Sleep(time.Millisecond)
		}
	}
	end()
	wg.Wait()
	for i, got := range order {
		if got != i {
			t.Fatalf("transactions began in the order %v, want arrival order", order)
		}
	}
}

func TestAWaiterGivesUpWhenItsContextEnds(t *testing.T) {
	db := open(t, 1)
	end := hold(t, db)
	refused(t, "a transaction beside a held one", func(ctx context.Context) error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return nil })
	})
	end()
	// The slot the waiter never got is not lost: the next transaction begins at once.
	within(t, time.Second, func() error { return db.Transaction(func(tx *gorm.DB) error { return nil }) })
}

func TestASlotIsGivenBackOnceWhateverTheOutcome(t *testing.T) {
	db := open(t, 1)
	if err := db.Exec(`CREATE TABLE gate_t (id int, CONSTRAINT gate_t_once UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)`).Error; err != nil {
		t.Fatal(err)
	}
	failing := errors.New("the work failed")
	if err := db.Transaction(func(tx *gorm.DB) error { return failing }); !errors.Is(err, failing) {
		t.Fatalf("rolled back: err = %v", err)
	}
	// The deferred constraint fails the commit itself; GORM then rolls back as well.
	err := db.Transaction(func(tx *gorm.DB) error { return tx.Exec("INSERT INTO gate_t VALUES (1), (1)").Error })
	if err == nil {
		t.Fatal("a commit that violates a deferred constraint succeeded")
	}
	for range 3 {
		within(t, time.Second, func() error {
			return db.Transaction(func(tx *gorm.DB) error {
				if _, err := tx.DB(); err != nil { // GORM can still reach the pool from inside
					return err
				}
				return tx.Exec("SELECT 1").Error
			})
		})
	}
	end := hold(t, db) // and the limit is still one
	defer end()
	refused(t, "a second transaction beside a held one", func(ctx context.Context) error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return nil })
	})
}

// refused fails the test unless f, given 50 ms, ends by its context's deadline: it found no turn.
func refused(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := f(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s: err = %v, want the context's deadline", what, err)
	}
}

// within runs f and fails the test if it errs or takes longer than d.
func within(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(d):
		t.Fatalf("still waiting after %s", d)
	}
}

func TestAdmittedWorkTakesATurnBesideTransactions(t *testing.T) {
	db := open(t, 1)
	end := hold(t, db)
	refused(t, "work admitted beside a held transaction", func(ctx context.Context) error {
		_, err := database.Admit(ctx, db)
		return err
	})
	end()
	release, err := database.Admit(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	// Its turn keeps a transaction waiting until it is given back, once however often it is called.
	refused(t, "a transaction beside admitted work", func(ctx context.Context) error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return nil })
	})
	release()
	release()
	// Inside a transaction, which holds the only turn, Admit takes none and so cannot wait forever.
	within(t, time.Second, func() error {
		return db.Transaction(func(tx *gorm.DB) error {
			again, err := database.Admit(context.Background(), tx)
			if err != nil {
				return err
			}
			again()
			return tx.Exec("SELECT 1").Error
		})
	})
	end2 := hold(t, db) // and the limit is still one
	defer end2()
	if database.Waiting(db) != 0 {
		t.Fatalf("%d waiting with nobody queued", database.Waiting(db))
	}
}

// The queue is bounded: a waiter that finds no turn within the turn wait gives up with ErrBusy,
// which Unavailable reports (the API answers 503), instead of queueing for as long as a stuck
// transaction holds every turn; every tenant's requests would otherwise pile up behind it.
func TestAWaiterGivesUpAfterTheTurnWait(t *testing.T) {
	db := openWith(t, pgtest.URL(t), database.Concurrency(1), database.TurnWait(200*time.Millisecond))
	end := hold(t, db)
	refused, waited := gathered(t, "wds_db_gate_busy_total"), gathered(t, "wds_db_gate_wait_seconds")
	for what, wait := range map[string]func() error{
		"a transaction": func() error { return db.Transaction(func(tx *gorm.DB) error { return nil }) },
		"admitted work": func() error { _, err := database.Admit(context.Background(), db); return err },
	} {
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- wait() }() // no deadline of its own: only the bound can end the wait
		select {
		case err := <-done:
			took := time.Since(start)
			if !errors.Is(err, database.ErrBusy) || !database.Unavailable(err) {
				t.Errorf("%s: err = %v, want ErrBusy, reported unavailable", what, err)
			}
			if took < 200*time.Millisecond {
				t.Errorf("%s: gave up after %s, before the turn wait", what, took)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still queued after 5 s with a turn wait of 200 ms", what)
		}
	}
	if n := database.Waiting(db); n != 0 {
		t.Fatalf("%d still queued after giving up", n)
	}
	// Both refusals are on the dashboard: counted, and their waits observed.
	if got := gathered(t, "wds_db_gate_busy_total") - refused; got < 2 {
		t.Errorf("wds_db_gate_busy_total grew by %v, want at least the 2 refusals", got)
	}
	if got := gathered(t, "wds_db_gate_wait_seconds") - waited; got < 2 {
		t.Errorf("wds_db_gate_wait_seconds observed %v waits, want at least the 2 refused ones", got)
	}
	end()
	// The turns the waiters never got are not lost.
	within(t, time.Second, func() error { return db.Transaction(func(tx *gorm.DB) error { return nil }) })
}

// gathered reads a counter's value or a histogram's count from the process's metrics registry.
func gathered(t *testing.T, name string) float64 {
	t.Helper()
	fams, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			switch {
			case f.GetName() != name:
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}
