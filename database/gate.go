package database

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// DefaultMaxTransactions is how many transactions a process runs at once when WDS_DB_MAX_TRANSACTIONS
// is unset: twice its CPUs, enough to keep them and a PostgreSQL of the same size busy while each
// transaction waits on round trips.
func DefaultMaxTransactions() int { return 2 * runtime.GOMAXPROCS(0) }

// gatedPool is the pool GORM draws on: statements pass straight through, and transactions are
// admitted at most cap(slots) at once, in arrival order. With a backend per client running at once
// on a small machine, the scheduler, not the work, decided a request's latency: at 16 clients on two
// cores an order create's p99 was 58 to 71 ms; admitted four at a time it was 33 to 37 ms at the same
// throughput (docs/benchmarks.md). database/sql's own limit (SetMaxOpenConns) cannot do this: it
// hands a freed connection to a random waiter, and the unlucky ones made the tail longer still.
type gatedPool struct {
	*sql.DB
	slots   chan struct{}
	waiting atomic.Int32 // callers queued for a slot
}

func newGatedPool(db *sql.DB, maxTransactions int) *gatedPool {
	return &gatedPool{DB: db, slots: make(chan struct{}, maxTransactions)}
}

// BeginTx waits for a slot (a channel's blocked senders are served first come, first served), then
// begins. The slot is held until the transaction commits or rolls back.
func (p *gatedPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	p.waiting.Add(1)
	select {
	case p.slots <- struct{}{}:
		p.waiting.Add(-1)
	case <-ctx.Done():
		p.waiting.Add(-1)
		return nil, fmt.Errorf("wait for a transaction slot: %w", ctx.Err())
	}
	tx, err := p.DB.BeginTx(ctx, opts)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return &gatedTx{Tx: tx, db: p.DB, release: sync.OnceFunc(func() { <-p.slots })}, nil
}

// GetDBConn lets gorm.DB.DB return the underlying pool.
func (p *gatedPool) GetDBConn() (*sql.DB, error) { return p.DB, nil }

// gatedTx gives its slot back once, whichever of Commit and Rollback comes first: GORM rolls back
// after a failed commit.
type gatedTx struct {
	*sql.Tx
	db      *sql.DB
	release func()
}

func (t *gatedTx) Commit() error {
	defer t.release()
	return t.Tx.Commit()
}

func (t *gatedTx) Rollback() error {
	defer t.release()
	return t.Tx.Rollback()
}

// GetDBConn lets gorm.DB.DB find the pool from inside a transaction too.
func (t *gatedTx) GetDBConn() (*sql.DB, error) { return t.db, nil }
