package database_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"wds/internal/platform/config"
	"wds/internal/platform/database"
	"wds/test/pgtest"
)

// openWith returns a handle on a fresh database opened with opts.
func openWith(t *testing.T, dbURL string, opts ...database.Option) *gorm.DB {
	t.Helper()
	db, err := database.Open(context.Background(), dbURL, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	return db
}

// settings reads statement_timeout and lock_timeout as PostgreSQL reports them, in milliseconds,
// on each of n connections held at once (so n different backends answer).
func settings(t *testing.T, db *gorm.DB, n int) [][2]int64 {
	t.Helper()
	var out [][2]int64
	var ends []func()
	for range n {
		begun, done, got, ended := make(chan struct{}), make(chan struct{}), make(chan [2]int64, 1), make(chan struct{})
		go func() {
			defer close(ended)
			_ = db.Transaction(func(tx *gorm.DB) error {
				var s struct{ Statement, Lock int64 }
				err := tx.Raw(`SELECT (extract(epoch FROM current_setting('statement_timeout')::interval) * 1000)::bigint AS statement,
					(extract(epoch FROM current_setting('lock_timeout')::interval) * 1000)::bigint AS lock`).Find(&s).Error
				if err != nil {
					t.Error(err)
				}
				got <- [2]int64{s.Statement, s.Lock}
				close(begun)
				<-done
				return nil
			})
		}()
		<-begun
		out = append(out, <-got)
		ends = append(ends, func() { close(done); <-ended })
	}
	for _, end := range ends {
		end()
	}
	return out
}

// Every connection of the pool carries the timeouts of config/timeouts.go; an option changes them
// (`wds migrate` turns the statement timeout off) and DATABASE_URL's query overrides both.
func TestEveryConnectionCarriesTheTimeouts(t *testing.T) {
	base := pgtest.URL(t)
	want := [2]int64{config.DBStatementTimeout.Milliseconds(), config.DBLockTimeout.Milliseconds()}
	for i, got := range settings(t, openWith(t, base, database.Concurrency(3)), 3) {
		if got != want {
			t.Errorf("connection %d: statement_timeout, lock_timeout = %v ms, want %v", i, got, want)
		}
	}
	migrating := openWith(t, base, database.StatementTimeout(0))
	if got := settings(t, migrating, 1)[0]; got != [2]int64{0, want[1]} {
		t.Errorf("with StatementTimeout(0): %v ms, want the statement timeout off", got)
	}
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("lock_timeout", "2s")
	q.Set("statement_timeout", "45s")
	u.RawQuery = q.Encode()
	if got := settings(t, openWith(t, u.String()), 1)[0]; got != [2]int64{45000, 2000} {
		t.Errorf("DATABASE_URL's ?statement_timeout=45s&lock_timeout=2s: %v ms", got)
	}
}

// pgCode is the SQLSTATE of err, or "" when it carries none.
func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// blockedBy runs f while another transaction holds what lockSQL locks, and returns f's error and how
// long it took; f must end within 5 s or the test fails (the lock is then released so it can).
func blockedBy(t *testing.T, other *gorm.DB, lockSQL string, f func() error) (error, time.Duration) {
	t.Helper()
	holder := other.Begin()
	if err := holder.Exec(lockSQL).Error; err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err, time.Since(start)
	case <-time.After(5 * time.Second):
		holder.Rollback()
		<-done
		t.Fatalf("still waiting for %q after 5 s", lockSQL)
		return nil, 0
	}
}

// A statement blocked on a row, table or advisory lock another transaction holds fails once
// lock_timeout passes, with an error Unavailable reports (the API answers 503, not 500), instead
// of waiting as long as the holder likes.
func TestALockWaitEndsAtTheLockTimeout(t *testing.T) {
	base := pgtest.URL(t)
	other := openWith(t, base)
	db := openWith(t, base, database.LockTimeout(300*time.Millisecond))
	if err := db.Exec(`CREATE TABLE lock_t (id int PRIMARY KEY, n int); INSERT INTO lock_t VALUES (1, 0)`).Error; err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, lock, blocked string }{
		{"a row lock", `SELECT * FROM lock_t WHERE id = 1 FOR UPDATE`, `UPDATE lock_t SET n = n + 1 WHERE id = 1`},
		{"a table lock", `LOCK TABLE lock_t IN ACCESS EXCLUSIVE MODE`, `SELECT count(*) FROM lock_t`},
		{"an advisory lock", `SELECT pg_advisory_xact_lock(7, 7)`, `SELECT pg_advisory_xact_lock(7, 7)`},
	} {
		err, took := blockedBy(t, other, c.lock, func() error {
			return db.Transaction(func(tx *gorm.DB) error { return tx.Exec(c.blocked).Error })
		})
		if pgCode(err) != "55P03" || !database.Unavailable(err) {
			t.Errorf("%s: err = %v (SQLSTATE %q), want lock_not_available (55P03), reported unavailable", c.what, err, pgCode(err))
		}
		if took < 300*time.Millisecond {
			t.Errorf("%s: gave up after %s, before the lock timeout", c.what, took)
		}
	}
	// The pool is still good afterwards.
	if err := db.Exec(`UPDATE lock_t SET n = n + 1 WHERE id = 1`).Error; err != nil {
		t.Fatal(err)
	}
}

// A statement that runs longer than statement_timeout is cancelled by PostgreSQL, and reported
// unavailable.
func TestAStatementEndsAtTheStatementTimeout(t *testing.T) {
	db := openWith(t, pgtest.URL(t), database.StatementTimeout(200*time.Millisecond))
	start := time.Now()
	err := db.Exec(`SELECT pg_sleep(5)`).Error
	if pgCode(err) != "57014" || !database.Unavailable(err) {
		t.Fatalf("err = %v (SQLSTATE %q), want query_canceled (57014), reported unavailable", err, pgCode(err))
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the statement ran %s", took)
	}
}

// A transaction whose context ends between its last statement and its commit is rolled back by
// database/sql, whose commit then says only "transaction has already been committed or rolled back";
// the error still says the work was cut short, so the API answers 503 and not 500.
func TestACommitAfterTheDeadlineIsReportedUnavailable(t *testing.T) {
	db := openWith(t, pgtest.URL(t))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SELECT 1").Error; err != nil {
			return err
		}
		<-ctx.Done()
		waitUntilNoOpenTransaction(t, db) // database/sql rolls back as soon as the context ends
		return nil
	})
	if err == nil || !database.Unavailable(err) {
		t.Fatalf("commit after the deadline: err = %v, want an error reported unavailable", err)
	}
}

// A statement whose caller gives up (a request's deadline, a client that hung up) has been
// cancelled in PostgreSQL by the time the call returns. pgx's default only abandoned the connection
// and sent the cancel afterwards, so the caller went on (released a lock, answered 503) while the
// backend still waited for its lock, and could then do the work nobody waited for any more: a single
// statement commits it.
func TestAStatementWhoseContextEndsIsCancelledInTheDatabase(t *testing.T) {
	base := pgtest.URL(t)
	other := openWith(t, base)
	db := openWith(t, base)
	if err := db.Exec(`CREATE TABLE cancel_t (id int PRIMARY KEY, n int); INSERT INTO cancel_t VALUES (1, 0)`).Error; err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		holder := other.Begin()
		if err := holder.Exec(`SELECT * FROM cancel_t WHERE id = 1 FOR UPDATE`).Error; err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := db.WithContext(ctx).Exec(`UPDATE cancel_t SET n = n + 1 WHERE id = 1`).Error
		cancel()
		if !database.Unavailable(err) {
			t.Fatalf("err = %v, want the deadline, reported unavailable", err)
		}
		// By the time the call returned, no backend may still be running the UPDATE.
		var running int64
		if err := other.Raw(`SELECT count(*) FROM pg_stat_activity
			WHERE state = 'active' AND query LIKE 'UPDATE cancel_t%'`).Scan(&running).Error; err != nil || running != 0 {
			t.Fatalf("round %d: %d backends still run the UPDATE (%v) after its caller gave up", i, running, err)
		}
		// The caller moves on at once: here, the lock the UPDATE waited for is released.
		if err := holder.Rollback().Error; err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := other.Raw(`SELECT n FROM cancel_t WHERE id = 1`).Scan(&n).Error; err != nil || n != 0 {
			t.Fatalf("round %d: n = %d (%v): the UPDATE its caller gave up on ran after all", i, n, err)
		}
	}
}

// A transaction left open between statements longer than idle_in_transaction_session_timeout is
// ended by PostgreSQL, which releases its locks; the next statement of its owner is reported
// unavailable. Every connection carries the setting of config/timeouts.go unless DATABASE_URL says.
func TestAnIdleTransactionIsEndedAndItsLocksReleased(t *testing.T) {
	base := pgtest.URL(t)
	var got string
	if err := openWith(t, base).Raw(`SELECT current_setting('idle_in_transaction_session_timeout')`).Scan(&got).Error; err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%ds", int(config.DBIdleInTransactionTimeout.Seconds())); got != want {
		t.Fatalf("idle_in_transaction_session_timeout = %s, want %s", got, want)
	}
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("idle_in_transaction_session_timeout", "300ms")
	u.RawQuery = q.Encode()
	db, other := openWith(t, u.String()), openWith(t, base)
	if err := db.Exec(`CREATE TABLE idle_t (id int PRIMARY KEY, n int); INSERT INTO idle_t VALUES (1, 0)`).Error; err != nil {
		t.Fatal(err)
	}
	tx := db.Begin()
	if err := tx.Exec(`UPDATE idle_t SET n = 1 WHERE id = 1`).Error; err != nil {
		t.Fatal(err)
	}
	waitUntilNoOpenTransaction(t, other) // PostgreSQL ends it once it has been idle 300 ms
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := other.WithContext(ctx).Exec(`UPDATE idle_t SET n = 2 WHERE id = 1`).Error; err != nil {
		t.Fatalf("the row stayed locked: %v", err)
	}
	if err := tx.Exec(`SELECT 1`).Error; !database.Unavailable(err) {
		t.Fatalf("the ended transaction's next statement: %v, want an error reported unavailable", err)
	}
	_ = tx.Rollback()
}

// Two transactions that lock two rows in opposite orders deadlock; PostgreSQL rolls one back whole,
// and its error is reported unavailable (the request may be retried), not as a defect of the work.
func TestTheLoserOfADeadlockIsReportedUnavailable(t *testing.T) {
	base := pgtest.URL(t)
	db := openWith(t, base, database.Concurrency(2))
	if err := db.Exec(`CREATE TABLE dead_t (id int PRIMARY KEY, n int); INSERT INTO dead_t VALUES (1, 0), (2, 0)`).Error; err != nil {
		t.Fatal(err)
	}
	locked, both := make(chan struct{}, 2), make(chan struct{})
	errs := make(chan error, 2)
	for _, order := range [][2]int{{1, 2}, {2, 1}} {
		go func() {
			errs <- db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Exec(`UPDATE dead_t SET n = n + 1 WHERE id = ?`, order[0]).Error; err != nil {
					return err
				}
				locked <- struct{}{}
				<-both // each holds its first row: now take the other's
				return tx.Exec(`UPDATE dead_t SET n = n + 1 WHERE id = ?`, order[1]).Error
			})
		}()
	}
	<-locked
	<-locked
	close(both)
	var failed []error
	for range 2 {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) != 1 || pgCode(failed[0]) != "40P01" || !database.Unavailable(failed[0]) {
		t.Fatalf("errors %v: want one deadlock_detected (40P01), reported unavailable", failed)
	}
}

// waitUntilNoOpenTransaction waits until no backend of the test database holds an open transaction.
func waitUntilNoOpenTransaction(t *testing.T, db *gorm.DB) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var open int64
		if err := db.Raw(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND state LIKE 'idle in transaction%'`).Scan(&open).Error; err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d transactions still open", open)
		}
	}
}
