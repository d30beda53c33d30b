// Package database opens the PostgreSQL pool every command shares.
//
// Raw queries read their rows with Find, not Scan: GORM's Scan records each statement through a
// trace recorder that renders the SQL with its arguments inlined (regular expressions over the
// text) whether or not anything is logged, and that was 8% of the API's CPU on an order create.
// Find reads the rows the same way and renders SQL only for the logger, which does so only for
// errors and slow statements.
package database

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/sirupsen/logrus"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Option changes how Open sets up the pool.
type Option func(*options)

type options struct{ concurrency int }

// Concurrency grants at most n turns at the database at once (gate.go); n <= 0 keeps the default.
func Concurrency(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.concurrency = n
		}
	}
}

// Open connects to url and checks the connection. Errors of GORM are translated so unique
// violations surface as gorm.ErrDuplicatedKey.
func Open(ctx context.Context, url string, log logrus.FieldLogger, opts ...Option) (*gorm.DB, error) {
	if log == nil {
		log = logrus.StandardLogger()
	}
	o := options{concurrency: defaultConcurrency()}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(registerTypes))
	db, err := gorm.Open(postgres.New(postgres.Config{Conn: newGatedPool(sqlDB, o.concurrency)}), &gorm.Config{
		TranslateError:         true,
		DisableAutomaticPing:   true, // the PingContext below, with its timeout, checks the connection
		SkipDefaultTransaction: true,
		Logger: logger.New(logWriter{log}, logger.Config{
			SlowThreshold:             500 * time.Millisecond,
			LogLevel:                  logger.Warn,
			IgnoreRecordNotFoundError: true,
			ParameterizedQueries:      true, // never put values (possibly secrets) in log lines
		}),
	})
	if err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB.SetMaxOpenConns(40)
	sqlDB.SetMaxIdleConns(40)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	// Replace connections now and then: after a failover or a DNS change they move to the new
	// primary, and a long-lived backend's caches do not grow without bound.
	sqlDB.SetConnMaxLifetime(30 * time.Minute)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(pingCtx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return db, nil
}

// registerTypes teaches a new connection to encode google/uuid values as binary UUIDs. Without it
// pgx takes the driver.Valuer path for every id parameter (format to text, then parse it back), which
// was a tenth of the API's CPU on an order create (docs/benchmarks.md).
func registerTypes(_ context.Context, conn *pgx.Conn) error {
	pgxuuid.Register(conn.TypeMap())
	return nil
}

type logWriter struct{ log logrus.FieldLogger }

func (w logWriter) Printf(format string, args ...any) { w.log.Warnf(format, args...) }

// Close releases the pool.
func Close(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return sqlDB.Close()
}
