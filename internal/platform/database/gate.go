package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/sync/semaphore"
	"gorm.io/gorm"

	"wds/internal/platform/metrics"
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
//
// The queue is bounded: a caller that finds no turn within maxWait (config.DBTurnWait) gives up with
// ErrBusy, which Unavailable reports, so the API answers 503. Otherwise one stuck transaction per turn
// (a lock nobody releases) would stall every request of every tenant behind it until each one's
// deadline, and work would pile up faster than it drains.
type gatedPool struct {
	*sql.DB
	turns   *semaphore.Weighted
	maxWait time.Duration
	waiting atomic.Int32 // callers queued for a turn
}

// ErrBusy is the error of a caller that waited the longest allowed for a turn at the database and got
// none: the database is too busy (or stuck) to be worth waiting for.
var ErrBusy = errors.New("the database is busy: no turn became free in time")

func newGatedPool(db *sql.DB, concurrency int, maxWait time.Duration) *gatedPool {
	return &gatedPool{DB: db, turns: semaphore.NewWeighted(int64(concurrency)), maxWait: maxWait}
}

// acquire waits for a turn, first come, first served, for at most maxWait. A free turn nobody queues
// for is taken without arming a timer.
func (p *gatedPool) acquire(ctx context.Context) error {
	if p.turns.TryAcquire(1) { // fails whenever someone queues, so arrival order is kept
		metrics.GateWait(0, false)
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, p.maxWait)
	defer cancel()
	p.waiting.Add(1) // right before queueing, so Waiting counts those in the queue
	defer p.waiting.Add(-1)
	start := time.Now()
	if err := p.turns.Acquire(wctx, 1); err != nil {
		busy := ctx.Err() == nil // the bound ran out, not the caller's own deadline
		metrics.GateWait(time.Since(start), busy)
		if busy {
			err = fmt.Errorf("%w (waited %s)", ErrBusy, p.maxWait)
		}
		return fmt.Errorf("wait for a turn at the database: %w", err)
	}
	metrics.GateWait(time.Since(start), false)
	return nil
}

func (p *gatedPool) release() { p.turns.Release(1) }

// BeginTx takes a turn, then begins. The turn is held until the transaction commits or rolls back.
// The transaction is a span of the caller's trace, its wait for a turn included.
func (p *gatedPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	ctx, span := txSpan(ctx)
	if err := p.acquire(ctx); err != nil {
		endSpan(span, err)
		return nil, err
	}
	tx, err := p.DB.BeginTx(ctx, opts)
	if err != nil {
		p.release()
		endSpan(span, err)
		return nil, err
	}
	return &gatedTx{Tx: tx, db: p.DB, ctx: ctx, span: span, release: sync.OnceFunc(p.release)}, nil
}

// txSpan starts the span of a transaction inside a traced request or activity. Work outside any
// trace (the relay's passes, twice a second per worker, the retention sweep) gets none: each would
// otherwise be a trace of one span. The tracer is looked up each time, not once, so it is the
// provider installed now (the tracing package).
func txSpan(ctx context.Context) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, noop.Span{}
	}
	return otel.Tracer("wds/internal/platform/database").Start(ctx, "db.transaction", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", "postgresql")))
}

// endSpan ends a transaction's span, marking it failed when err is set.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
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
	db *sql.DB
	// ctx is the context the transaction began with, kept only to explain ErrTxDone.
	ctx     context.Context
	span    trace.Span
	release func()
}

func (t *gatedTx) Commit() error {
	defer t.release()
	err := t.explain(t.Tx.Commit())
	endSpan(t.span, err)
	return err
}

// Rollback ends the span with an error only when the rollback itself fails: a rollback after a
// failed commit (GORM does that) finds the span ended already, which OpenTelemetry ignores.
func (t *gatedTx) Rollback() error {
	defer t.release()
	err := t.explain(t.Tx.Rollback())
	t.span.SetAttributes(attribute.Bool("db.rolled_back", true))
	endSpan(t.span, err)
	return err
}

// explain adds why a transaction was already done: when its context ends (a request's deadline
// passes between its last statement and the commit), database/sql rolls it back and the commit
// reports only sql.ErrTxDone, which reads like a defect (a 500). With the context's error joined it
// is what it is, work cut short, which Unavailable reports.
func (t *gatedTx) explain(err error) error {
	if errors.Is(err, sql.ErrTxDone) && t.ctx.Err() != nil {
		return fmt.Errorf("%w: %w", err, t.ctx.Err())
	}
	return err
}

// GetDBConn lets gorm.DB.DB find the pool from inside a transaction too.
func (t *gatedTx) GetDBConn() (*sql.DB, error) { return t.db, nil }
