package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// Held is one connection of the pool and a turn at the database (gate.go), held for a GORM
// transaction begun on it (Held.DB.Transaction) that sends some of its statements together, in one
// round trip, where database/sql waits for each statement's answer before sending the next: Send
// sends a pgx batch, any number of statements, and SendAtCommit has one go with the COMMIT. GORM
// begins, commits and rolls back that transaction as any other (heldTx); its other statements go
// through GORM one at a time, on the same connection. End rolls back whatever was left open and
// gives the connection and the turn back.
type Held struct {
	// DB is GORM on the held connection; begin the transaction on it.
	DB      *gorm.DB
	conn    *sql.Conn
	ctx     context.Context
	span    trace.Span
	release func()
}

// heldPool is GORM's connection pool of a Held: its one connection.
type heldPool struct {
	*sql.Conn
	db   *sql.DB
	span trace.Span
}

// GetDBConn lets gorm.DB.DB find the pool from a held connection.
func (p heldPool) GetDBConn() (*sql.DB, error) { return p.db, nil }

// Hold takes a turn at the database, as a transaction does, then one of db's connections. The
// connections must be pgx's (Open makes them so), and db the pool, not a transaction: a held
// connection is another connection, outside it. A transaction that batches therefore begins on the
// held connection, not the other way round.
func Hold(ctx context.Context, db *gorm.DB) (*Held, error) {
	switch db.Statement.ConnPool.(type) {
	case gorm.TxCommitter, heldPool:
		return nil, errors.New("hold a connection: the database handle is a transaction's")
	}
	ctx, span := txSpan(ctx)
	release, err := Admit(ctx, db)
	if err != nil {
		endSpan(span, err)
		return nil, err
	}
	h := &Held{ctx: ctx, span: span, release: release}
	sqlDB, err := db.DB()
	if err == nil {
		h.conn, err = sqlDB.Conn(ctx)
	}
	if err != nil {
		release()
		endSpan(span, err)
		return nil, fmt.Errorf("hold a connection: %w", err)
	}
	h.DB = db.Session(&gorm.Session{Context: ctx, NewDB: true})
	h.DB.Statement.ConnPool = heldPool{Conn: h.conn, db: sqlDB, span: span}
	return h, nil
}

// End rolls back a transaction left open (GORM rolls back its own; this is for a panic or a
// rollback that could not be sent), then gives the connection and the turn back. err is how the
// holder's work ended, for its span. A connection whose rollback failed is still in its
// transaction, and the pool closes it rather than reuse it.
func (h *Held) End(err error) {
	rbErr := rollback(h.ctx, h.conn)
	_ = h.conn.Close() // back to the pool, which resets (or discards) it
	h.release()
	if err == nil {
		err = rbErr
	}
	endSpan(h.span, err)
}

// rollback sends ROLLBACK if conn is in a transaction, failed or not.
func rollback(ctx context.Context, conn *sql.Conn) error {
	return conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok || c.Conn().PgConn().TxStatus() == 'I' {
			return nil
		}
		_, err := c.Conn().Exec(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	})
}

// BeginTx is GORM's Begin on a held connection: a heldTx, which sends nothing yet. It takes the
// place of sql.Conn's BeginTx, whose BEGIN would be a round trip of its own.
func (p heldPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	if opts != nil && (opts.Isolation != sql.LevelDefault || opts.ReadOnly) {
		return nil, errors.New("begin on a held connection: only the default isolation, read-write")
	}
	return &heldTx{conn: p.Conn, db: p.db, span: p.span, ctx: ctx}, nil
}

// heldTx is GORM's transaction on a held connection, its BEGIN and COMMIT in the round trips of its
// statements: BEGIN goes with the first batch sent in it (Send), or alone just before its first
// statement through database/sql, which cannot take it along; COMMIT goes with the batch the
// transaction ends with (SendAtCommit). A transaction of two batches is thus two round trips, where
// database/sql would spend one more on each of BEGIN and COMMIT. One that sent nothing has nothing to
// commit or roll back.
type heldTx struct {
	conn *sql.Conn
	db   *sql.DB
	span trace.Span
	// ctx is the one GORM began the transaction with, for Commit and Rollback, which take none.
	ctx   context.Context
	begun bool // BEGIN was sent, or went out with a batch
	// failed is the error of a BEGIN that was sent and failed; every later statement fails with it
	// rather than run outside the transaction.
	failed error
	// last is the batch that goes with COMMIT and readLast reads its answers (SendAtCommit).
	last     *pgx.Batch
	readLast func(pgx.BatchResults) error
}

// begin sends BEGIN alone, if it has not gone yet, for a statement database/sql sends next.
func (t *heldTx) begin(ctx context.Context) error {
	if !t.begun {
		t.begun = true
		if _, err := t.conn.ExecContext(ctx, "begin"); err != nil {
			t.failed = fmt.Errorf("begin: %w", err)
		}
	}
	return t.failed
}

func (t *heldTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	return t.conn.PrepareContext(ctx, query)
}

func (t *heldTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	return t.conn.ExecContext(ctx, query, args...)
}

func (t *heldTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	return t.conn.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query after BEGIN. A *sql.Row cannot be made with an error of one's own: when
// BEGIN fails, the row is that of the query on an ended context, which sends nothing and fails.
func (t *heldTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if err := t.begin(ctx); err != nil {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		ctx = ended
	}
	return t.conn.QueryRowContext(ctx, query, args...)
}

// Commit sends COMMIT, after the batch SendAtCommit left, in one round trip. A failure of that
// batch fails the commit, and GORM then rolls back.
func (t *heldTx) Commit() error {
	b, read := t.last, t.readLast
	t.last, t.readLast = nil, nil
	if t.failed != nil {
		return t.failed
	}
	if b == nil {
		if !t.begun {
			return nil
		}
		b = &pgx.Batch{}
	}
	b.Queue("commit")
	return t.send(t.ctx, b, func(r pgx.BatchResults) error {
		if read != nil {
			if err := read(r); err != nil {
				return err
			}
		}
		tag, err := r.Exec()
		if err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		if tag.String() == "ROLLBACK" { // the transaction had failed: PostgreSQL rolled it back
			return fmt.Errorf("commit: %w", pgx.ErrTxCommitRollback)
		}
		return nil
	})
}

// Rollback drops the batch meant for the commit and rolls back what was sent.
func (t *heldTx) Rollback() error {
	t.last, t.readLast = nil, nil
	t.span.SetAttributes(attribute.Bool("db.rolled_back", true))
	return rollback(t.ctx, t.conn)
}

// GetDBConn lets gorm.DB.DB find the pool from inside the transaction too.
func (t *heldTx) GetDBConn() (*sql.DB, error) { return t.db, nil }

// send sends b in one round trip, with BEGIN ahead of it if the transaction has not begun, and calls
// read with the results of b's own statements.
func (t *heldTx) send(ctx context.Context, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	if t.failed != nil {
		return t.failed
	}
	begin := !t.begun
	if begin {
		withBegin := &pgx.Batch{}
		withBegin.Queue("begin")
		withBegin.QueuedQueries = append(withBegin.QueuedQueries, b.QueuedQueries...)
		b, t.begun = withBegin, true
	}
	return t.conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return errNotPgx
		}
		br := c.Conn().SendBatch(ctx, b)
		err := t.readAfterBegin(br, begin, read)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// readAfterBegin reads the answer of the BEGIN sent ahead of a batch, if one was, then the batch's.
func (t *heldTx) readAfterBegin(r pgx.BatchResults, begin bool, read func(pgx.BatchResults) error) error {
	if begin {
		if _, err := r.Exec(); err != nil {
			t.failed = fmt.Errorf("begin: %w", err)
			return t.failed
		}
	}
	return read(r)
}

// Send sends b in one round trip inside tx, a transaction begun on a held connection, and calls read
// with its results, which read must consume in b's order (pgx.BatchResults). A failed statement
// fails the ones after it in b, and the transaction. b's statements are written with pgx's $1
// placeholders (Numbered).
func Send(tx *gorm.DB, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	t, err := heldTxOf(tx)
	if err != nil {
		return err
	}
	return t.send(tx.Statement.Context, b, read)
}

// SendAtCommit has b sent with tx's COMMIT, in the same round trip, when GORM commits tx (a
// transaction begun on a held connection), and read called with its results then; read's error
// fails the commit. It is for the statements a transaction ends with, whose answers nothing in it
// waits for (the outbox's events). One batch per transaction.
func SendAtCommit(tx *gorm.DB, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	t, err := heldTxOf(tx)
	if err != nil {
		return err
	}
	if t.last != nil {
		return errors.New("send at commit: the transaction has its batch already")
	}
	t.last, t.readLast = b, read
	return nil
}

func heldTxOf(tx *gorm.DB) (*heldTx, error) {
	t, ok := tx.Statement.ConnPool.(*heldTx)
	if !ok {
		return nil, errors.New("send a batch: the handle is not a transaction begun on a held connection")
	}
	return t, nil
}

// Retryable reports an error of a held connection that had died before its work reached
// PostgreSQL (nothing was sent, or the transaction was cut before its commit was sent): the whole
// transaction may run again on another connection, as database/sql retries a statement.
func Retryable(err error) bool {
	return err != nil && (pgconn.SafeToRetry(err) || errors.Is(err, driver.ErrBadConn))
}

// Numbered is query with GORM's ? placeholders as pgx's $1, $2, ...; a ? inside a quoted literal or
// identifier is left alone. The statements a holder sends with Send are written for GORM too.
func Numbered(query string) string {
	if v, ok := numbered.Load(query); ok {
		return v.(string)
	}
	var b strings.Builder
	n, quote := 0, byte(0)
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	numbered.Store(query, b.String())
	return b.String()
}

// numbered caches Numbered: a holder sends the same few statements again and again.
var numbered sync.Map
