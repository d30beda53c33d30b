// Package database opens the PostgreSQL pool every command shares, gates the work on it (gate.go),
// and lends one of its connections to a GORM transaction that sends some of its statements together,
// in pgx batches (held.go).
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
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/sirupsen/logrus"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"wds/internal/platform/config"
)

// Option changes how Open sets up the pool.
type Option func(*options)

type options struct {
	concurrency int
	turnWait    time.Duration
	// statementTimeout, lockTimeout and idleInTransaction are PostgreSQL's settings for every
	// connection; 0 turns one off.
	statementTimeout, lockTimeout, idleInTransaction time.Duration
}

// Concurrency grants at most n turns at the database at once (gate.go); n <= 0 keeps the default.
func Concurrency(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.concurrency = n
		}
	}
}

// StatementTimeout sets PostgreSQL's statement_timeout on every connection instead of
// config.DBStatementTimeout; 0 turns it off (`wds migrate`: an index build may take longer).
func StatementTimeout(d time.Duration) Option {
	return func(o *options) { o.statementTimeout = max(d, 0) }
}

// LockTimeout sets PostgreSQL's lock_timeout on every connection instead of config.DBLockTimeout;
// 0 turns it off.
func LockTimeout(d time.Duration) Option { return func(o *options) { o.lockTimeout = max(d, 0) } }

// TurnWait bounds how long work waits for a turn (gate.go) instead of config.DBTurnWait; d <= 0
// keeps the default.
func TurnWait(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.turnWait = d
		}
	}
}

// Open connects to url and checks the connection. Errors of GORM are translated so unique
// violations surface as gorm.ErrDuplicatedKey.
func Open(ctx context.Context, url string, log logrus.FieldLogger, opts ...Option) (*gorm.DB, error) {
	if log == nil {
		log = logrus.StandardLogger()
	}
	o := options{concurrency: defaultConcurrency(), turnWait: config.DBTurnWait,
		statementTimeout: config.DBStatementTimeout, lockTimeout: config.DBLockTimeout,
		idleInTransaction: config.DBIdleInTransactionTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// When a caller's context ends (a request's deadline, a client that hung up), ask PostgreSQL to
	// cancel the statement. pgx's default only abandons the connection: the backend went on running
	// the statement, or waiting for its lock, until it ended by itself, and a single statement that
	// then succeeded (the rate limiter's count) committed work nobody waited for any more.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: config.DBCancelGrace}
	}
	setup := sessionSetup(cfg.RuntimeParams, o)
	sqlDB := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(ctx context.Context, conn *pgx.Conn) error {
		registerTypes(conn)
		if setup == "" {
			return nil
		}
		if _, err := conn.Exec(ctx, setup); err != nil {
			return fmt.Errorf("set session timeouts: %w", err)
		}
		return nil
	}))
	db, err := gorm.Open(postgres.New(postgres.Config{Conn: newGatedPool(sqlDB, o.concurrency, o.turnWait)}), &gorm.Config{
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
// was a tenth of the API's CPU on an order create in the benchmark's profile.
func registerTypes(conn *pgx.Conn) { pgxuuid.Register(conn.TypeMap()) }

// sessionSetup is the SET statement each new connection runs: statement_timeout, lock_timeout and
// idle_in_transaction_session_timeout, so that no statement runs, none waits for a lock and no
// transaction sits idle longer than a request may (config/timeouts.go), whoever else holds the lock. A setting the URL's query already gives (DATABASE_URL
// ...?lock_timeout=5s, sent in the start-up packet) is left to the URL. They are SET after connecting
// rather than sent in the start-up packet because PgBouncer refuses start-up parameters it does not
// know; behind PgBouncer in transaction mode a session SET is not kept per client, so there set them
// on the role instead (docs/production.md).
func sessionSetup(fromURL map[string]string, o options) string {
	var set []string
	for _, p := range []struct {
		name string
		d    time.Duration
	}{{"statement_timeout", o.statementTimeout}, {"lock_timeout", o.lockTimeout},
		{"idle_in_transaction_session_timeout", o.idleInTransaction}} {
		if _, given := fromURL[p.name]; !given {
			set = append(set, fmt.Sprintf("SET %s = %d", p.name, p.d.Milliseconds()))
		}
	}
	return strings.Join(set, "; ")
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
