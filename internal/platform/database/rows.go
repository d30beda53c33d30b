package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
)

// Row is one row of EachRow's query: Scan reads its columns into dest, in order.
type Row interface {
	Scan(dest ...any) error
}

// EachRow runs query and calls each for every row. Outside a transaction the rows are read with
// pgx's own interface, which decodes each column straight into its target; database/sql first
// builds a driver.Value and then converts it, which was a sixth of wds serve's CPU on a Read API
// page of 50 orders (docs/benchmarks.md). Inside a transaction, which database/sql holds, or on a
// Held connection, the same targets are scanned through it. GORM still builds the statement and runs its row callbacks, as a
// dry run, so whatever watches GORM's statements sees this one too, and its logger is told how the
// query went.
func EachRow(ctx context.Context, db *gorm.DB, query string, args []any, each func(Row) error) error {
	tx := db.WithContext(ctx)
	switch tx.Statement.ConnPool.(type) {
	case gorm.TxCommitter, heldPool:
		return eachSQLRow(tx, query, args, each)
	}
	dry := tx.Session(&gorm.Session{DryRun: true}).Raw(query, args...)
	if _, err := dry.Rows(); err != nil && !errors.Is(err, gorm.ErrDryRunModeUnsupported) {
		return err
	}
	sqlText, vars := dry.Statement.SQL.String(), dry.Statement.Vars
	begin := time.Now()
	var n int64
	counted := func(r Row) error { n++; return each(r) }
	err := eachPgxRow(ctx, db, sqlText, vars, counted)
	if errors.Is(err, driver.ErrBadConn) && n == 0 {
		// A pooled connection that died (PostgreSQL restarted) was dropped; database/sql would have
		// tried another one too.
		err = eachPgxRow(ctx, db, sqlText, vars, counted)
	}
	if errors.Is(err, errNotPgx) {
		return eachSQLRow(tx, query, args, each)
	}
	tx.Logger.Trace(ctx, begin, func() (string, int64) { return sqlText, n }, err)
	return err
}

// errNotPgx is a pool whose connections are not pgx's (a wrapped driver): EachRow reads through
// database/sql instead.
var errNotPgx = errors.New("the connection is not pgx's")

// eachPgxRow runs the query on a connection of db's pool with pgx. An error that left nothing sent
// is reported as driver.ErrBadConn, which makes database/sql drop the connection.
func eachPgxRow(ctx context.Context, db *gorm.DB, query string, args []any, each func(Row) error) error {
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return errNotPgx
		}
		rows, err := c.Conn().Query(ctx, query, args...)
		if err == nil {
			defer rows.Close()
			err = forEach(rows, each)
		}
		if err != nil && pgconn.SafeToRetry(err) {
			return fmt.Errorf("%w: %w", driver.ErrBadConn, err)
		}
		return err
	})
}

func eachSQLRow(tx *gorm.DB, query string, args []any, each func(Row) error) error {
	rows, err := tx.Raw(query, args...).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	return forEach(rows, each)
}

// rowSet is pgx's rows and database/sql's alike.
type rowSet interface {
	Row
	Next() bool
	Err() error
}

func forEach(r rowSet, each func(Row) error) error {
	for r.Next() {
		if err := each(r); err != nil {
			return err
		}
	}
	return r.Err()
}
