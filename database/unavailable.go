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
// connections, or the caller's deadline or cancellation cut the work short. Such a failure rolled
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
		errors.As(err, &connect), errors.As(err, &netErr), pgconn.Timeout(err):
		return true
	case errors.As(err, &pgErr):
		// Class 08 is "connection exception"; 57P01-03 are shutdown and start-up; 53300 is too
		// many connections.
		return pgErr.Code[:2] == "08" || pgErr.Code == "57P01" || pgErr.Code == "57P02" ||
			pgErr.Code == "57P03" || pgErr.Code == "53300"
	}
	return false
}
