package database_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"wds/internal/platform/database"
)

func TestUnavailableTellsTheInfrastructureFromTheWork(t *testing.T) {
	for err, want := range map[error]bool{
		context.Canceled: true,
		fmt.Errorf("create order: %w", context.DeadlineExceeded): true,
		fmt.Errorf("query: %w", driver.ErrBadConn):               true,
		&pgconn.PgError{Code: "57P01"}:                           true,  // admin shutdown
		&pgconn.PgError{Code: "08006"}:                           true,  // connection failure
		&pgconn.PgError{Code: "53300"}:                           true,  // too many connections
		&pgconn.PgError{Code: "55P03"}:                           true,  // lock_timeout passed
		&pgconn.PgError{Code: "57014"}:                           true,  // statement_timeout passed, or cancelled
		fmt.Errorf("begin: %w", database.ErrBusy):                true,  // no turn at the database in time
		&pgconn.PgError{Code: "40P01"}:                           true,  // deadlock: the loser was rolled back whole
		&pgconn.PgError{Code: "40001"}:                           true,  // serialization failure
		&pgconn.PgError{Code: "25P03"}:                           true,  // idle_in_transaction_session_timeout
		&pgconn.PgError{Code: "23505"}:                           false, // unique violation: the work
		errors.New("a defect"):                                   false,
		nil:                                                      false,
	} {
		if got := database.Unavailable(err); got != want {
			t.Errorf("Unavailable(%v) = %v, want %v", err, got, want)
		}
	}
}

// A server that is not there at all is unavailable too, as pgx reports it.
func TestUnavailableWhenNothingListens(t *testing.T) {
	_, err := database.Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", nil)
	if err == nil || !database.Unavailable(err) {
		t.Fatalf("%v: want an unavailable error", err)
	}
}
