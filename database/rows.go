package database

import (
	"context"
	"errors"
	"fmt"

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
// page of 50 orders (docs/benchmarks.md). Inside a transaction, which database/sql holds, the same
// targets are scanned through it. GORM still builds the statement and runs its row callbacks, as a
// dry run, so whatever watches GORM's statements sees this one too.
func EachRow(ctx context.Context, db *gorm.DB, query string, args []any, each func(Row) error) error {
	tx := db.WithContext(ctx)
	if _, inTx := tx.Statement.ConnPool.(gorm.TxCommitter); inTx {
		return eachSQLRow(tx, query, args, each)
	}
	dry := tx.Session(&gorm.Session{DryRun: true}).Raw(query, args...)
	if _, err := dry.Rows(); err != nil && !errors.Is(err, gorm.ErrDryRunModeUnsupported) {
		return err
	}
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
		rows, err := driverConn.(*stdlib.Conn).Conn().Query(ctx, dry.Statement.SQL.String(), dry.Statement.Vars...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := each(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

func eachSQLRow(tx *gorm.DB, query string, args []any, each func(Row) error) error {
	rows, err := tx.Raw(query, args...).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
