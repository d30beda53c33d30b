package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err says the database could not do the work, rather than that the
// work was wrong: it could not be reached, dropped the connection, is shutting down or refusing
// connections, was too busy to give the work a turn (ErrBusy), the work waited longer than
// lock_timeout for a lock another transaction held or ran longer than statement_timeout
// (config/timeouts.go), sat idle in a transaction longer than idle_in_transaction_session_timeout,
// lost a deadlock or a serialization conflict, or the caller's deadline or cancellation cut it short. Such a failure rolled
// back whatever it touched, and the same request may succeed on a retry, so callers answer 503 and
// never keep the answer (an Idempotency-Key is released, not settled).
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, ErrBusy), errors.As(err, &connect), errors.As(err, &netErr), pgconn.Timeout(err):
		return true
	case errors.As(err, &pgErr):
		// Class 08 is "connection exception"; 57P01-03 are shutdown and start-up; 53300 is too
		// many connections; 55P03 is lock_not_available (lock_timeout passed; the code never uses
		// NOWAIT); 57014 is query_canceled (statement_timeout passed, or a cancel request: the
		// caller's context ended or an administrator cancelled the statement); 25P03 is
		// idle_in_transaction_session_timeout. Class 40 is a transaction rollback: 40P01 a deadlock,
		// 40001 a serialization failure. PostgreSQL rolled the loser back whole and logs both sides
		// of a deadlock; the same request succeeds when retried, which is what 503 tells the client.
		return pgErr.Code[:2] == "08" || pgErr.Code[:2] == "40" || pgErr.Code == "57P01" || pgErr.Code == "57P02" ||
			pgErr.Code == "57P03" || pgErr.Code == "53300" || pgErr.Code == "55P03" || pgErr.Code == "57014" ||
			pgErr.Code == "25P03"
	}
	return false
}
