package database

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
	"gorm.io/gorm"
)

// defaultConcurrency is how many turns at the database a process grants at once when
// WDS_DB_CONCURRENCY is unset: twice its CPUs, enough to keep them and a PostgreSQL of the same size
// busy while each turn waits on round trips.
func defaultConcurrency() int { return 2 * runtime.GOMAXPROCS(0) }

// gatedPool is the pool GORM draws on. A transaction, and work a caller admits explicitly (Admit),
// takes a turn, at most cap(slots) at once, in arrival order; other statements pass straight
// through. With a backend per client running at once on a small machine, the scheduler, not the
// work, decided a request's latency: at 16 clients on two cores an order create's p99 was 58 to 83 ms
// and a Read API page's 103 to 114 ms; four turns at a time made them 32 to 37 ms and 39 to 62 ms at
// the same throughput (docs/benchmarks.md). database/sql's own limit (SetMaxOpenConns) cannot do
// this: it hands a freed connection to a random waiter, and the unlucky ones made the tail longer.
// semaphore.Weighted documents that it serves waiters in order, which is the whole point.
type gatedPool struct {
	*sql.DB
	turns   *semaphore.Weighted
	waiting atomic.Int32 // callers queued for a turn
}

func newGatedPool(db *sql.DB, concurrency int) *gatedPool {
	return &gatedPool{DB: db, turns: semaphore.NewWeighted(int64(concurrency))}
}

// acquire waits for a turn, first come, first served.
func (p *gatedPool) acquire(ctx context.Context) error {
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	if err := p.turns.Acquire(ctx, 1); err != nil {
		return fmt.Errorf("wait for a turn at the database: %w", err)
	}
	return nil
}

func (p *gatedPool) release() { p.turns.Release(1) }

// BeginTx takes a turn, then begins. The turn is held until the transaction commits or rolls back.
func (p *gatedPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	tx, err := p.DB.BeginTx(ctx, opts)
	if err != nil {
		p.release()
		return nil, err
	}
	return &gatedTx{Tx: tx, db: p.DB, release: sync.OnceFunc(p.release)}, nil
}

// Admit takes a turn for work on db that is not a transaction but is worth queueing like one (a
// Read API page's statement), and returns the function that gives it back. Inside a transaction,
// which holds a turn already, it takes none.
func Admit(ctx context.Context, db *gorm.DB) (release func(), err error) {
	pool := db.ConnPool
	if db.Statement != nil && db.Statement.ConnPool != nil {
		pool = db.Statement.ConnPool
	}
	p, ok := pool.(*gatedPool)
	if !ok {
		return func() {}, nil
	}
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	return sync.OnceFunc(p.release), nil
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
