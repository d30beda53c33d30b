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
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// Held is one connection of the pool and a turn at the database (gate.go), held for a transaction
// its holder drives itself, so that statements it sends together travel together: Send writes a pgx
// batch, any number of statements, in one round trip (BEGIN and COMMIT may be among them), where
// database/sql waits for each statement's answer before sending the next. Statements it must send
// one at a time go through DB, GORM on the same connection, inside the same transaction. End rolls
// back whatever the holder did not commit and gives the connection and the turn back.
type Held struct {
	// DB is GORM on the held connection; Raw statements and EachRow run on it inside the transaction.
	DB      *gorm.DB
	conn    *sql.Conn
	ctx     context.Context
	span    trace.Span
	release func()
}

// heldPool is GORM's connection pool of a Held: its one connection.
type heldPool struct {
	*sql.Conn
	db *sql.DB
}

// GetDBConn lets gorm.DB.DB find the pool from a held connection.
func (p heldPool) GetDBConn() (*sql.DB, error) { return p.db, nil }

// Hold takes a turn at the database, as a transaction does, then one of db's connections. The
// connections must be pgx's (Open makes them so), and db the pool, not a transaction: a held
// connection is another connection, outside it.
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
	h.DB.Statement.ConnPool = heldPool{Conn: h.conn, db: sqlDB}
	return h, nil
}

// Send sends b in one round trip and calls read with its results, which read must consume in b's
// order (pgx.BatchResults). A failed statement fails the ones after it in b, and the transaction.
func (h *Held) Send(b *pgx.Batch, read func(pgx.BatchResults) error) error {
	return h.conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return errNotPgx
		}
		br := c.Conn().SendBatch(h.ctx, b)
		err := read(br)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// End rolls back a transaction the holder began and did not commit (on a failure, or one whose
// commit did not happen), then gives the connection and the turn back. err is how the holder's work
// ended, for its span. A connection whose rollback failed is still in its transaction, and the pool
// closes it rather than reuse it.
func (h *Held) End(err error) {
	rbErr := h.conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok || c.Conn().PgConn().TxStatus() == 'I' {
			return nil
		}
		_, err := c.Conn().Exec(context.WithoutCancel(h.ctx), "ROLLBACK")
		return err
	})
	_ = h.conn.Close() // back to the pool, which resets (or discards) it
	h.release()
	if err == nil {
		err = rbErr
	}
	endSpan(h.span, err)
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
