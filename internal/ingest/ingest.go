// Package ingest is the Integration API's operations: create an order (optionally with its client and
// an inline payment), record a payment, cancel, refund, upsert a client, look an order up by its
// external id, apply a store-native order, and the Idempotency-Key cache; and the same writes made by
// an operator in the app (app.go): an order made by hand, a client added or edited. Every rule of
// those operations lives here, once for both writers; the HTTP layer, the console and the CLI only
// decode, authenticate and render.
//
// Each operation is a method of Service and one database transaction holding its business rows and
// its outbox events, so a failure leaves nothing behind; after the commit the service starts the
// events it wrote (EventStarter), so no caller has to. The transaction is GORM's, begun on a
// connection held from GORM's pool (Service.transact), so that statements can also travel together
// in pgx batches: every operation's events go with its COMMIT, and an integration order create, the
// busiest write, sends its claim and inserts with the BEGIN, two round trips in all (create.go);
// other statements go one at a time through GORM. The order's rows and view are package order's;
// the rules of what to write are here. Races are settled by PostgreSQL: external ids
// are claimed with INSERT ... ON CONFLICT DO NOTHING on external_refs (whose primary key is the final
// word; create_batch.go), and a loser reads the winner's row instead of checking first in Go.
package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"wds/internal/apikeys"
	"wds/internal/order"
	"wds/internal/outbox"
	"wds/internal/platform/database"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/models"
)

// Service runs the operations over the database. Each write starts the events it committed as soon
// as its transaction commits, whichever adapter called it (HTTP, console, CLI).
type Service struct {
	db     *gorm.DB
	events EventStarter
}

// EventStarter starts webhook delivery of events already committed to the outbox (worker.Starter).
// It must not fail the write: what it cannot start now the worker's relay starts after its grace.
type EventStarter interface {
	StartEvents(ctx context.Context, eventIDs []uuid.UUID)
}

// NewService is the operations over db; events nil leaves every event to the worker's relay (the
// database-only CLI, tests of the rules alone).
func NewService(db *gorm.DB, events EventStarter) *Service {
	return &Service{db: db, events: events}
}

// scope is what an integration key may see: its own org and store, nothing else.
func scope(key *models.IntegrationKey) paging.Scope {
	store := key.StoreID
	return paging.Scope{OrgID: key.OrgID, StoreID: &store}
}

// scope is the op's org and store.
func (o *op) scope() paging.Scope {
	store := o.store
	return paging.Scope{OrgID: o.org, StoreID: &store}
}

// op carries one transaction, who writes (an integration key, or an operator working in the app),
// and the events it announces, which are written with the commit and started after it
// (Service.run).
type op struct {
	ctx context.Context
	tx  *gorm.DB
	// key is the integration key that writes; nil when an operator writes in the app. External ids
	// and source stamps belong to keys, so an app write has neither.
	key *models.IntegrationKey
	// org and store scope every row the op reads or writes: the key's, or the operator's choice.
	org, store uuid.UUID
	events     []outbox.PendingEvent
}

// keyOp is an op of an integration key, bound to the key's org and store.
func keyOp(ctx context.Context, tx *gorm.DB, key *models.IntegrationKey) *op {
	return &op{ctx: ctx, tx: tx, key: key, org: key.OrgID, store: key.StoreID}
}

// keyID is the writing key's id, or nil (SQL NULL, which matches no external_refs row) in the app.
func (o *op) keyID() *uuid.UUID {
	if o.key == nil {
		return nil
	}
	return &o.key.ID
}

// inTx runs fn in one transaction of the key and, once committed, starts the events it emitted
// (run).
func (s *Service) inTx(ctx context.Context, key *models.IntegrationKey, fn func(o *op) error) error {
	return s.run(ctx, func(tx *gorm.DB) *op { return keyOp(ctx, tx, key) }, fn)
}

// run is inTx for an op that newOp makes from the transaction: the events fn emitted are written
// with the commit and, after it, those an endpoint can receive are started. fn may run twice
// (transact), each time with a new op.
func (s *Service) run(ctx context.Context, newOp func(tx *gorm.DB) *op, fn func(o *op) error) error {
	var ids []uuid.UUID
	err := s.transact(ctx, func(tx *gorm.DB) error {
		ids = nil
		o := newOp(tx)
		if err := fn(o); err != nil {
			return err
		}
		return o.writeEvents(&ids)
	})
	if err != nil {
		return err
	}
	if s.events != nil && len(ids) > 0 {
		s.events.StartEvents(ctx, ids)
	}
	return nil
}

// transact runs fn in a GORM transaction on a held connection (database.Hold), so that the op can
// send statements together (database.Send) and its events go with the COMMIT: an order create is
// two round trips. When the connection had died (PostgreSQL restarted) before the transaction
// committed anything, fn runs again on another one, as database/sql retries a statement.
func (s *Service) transact(ctx context.Context, fn func(tx *gorm.DB) error) error {
	err := s.transactOnce(ctx, fn)
	if database.Retryable(err) {
		err = s.transactOnce(ctx, fn)
	}
	return err
}

func (s *Service) transactOnce(ctx context.Context, fn func(tx *gorm.DB) error) (err error) {
	h, err := database.Hold(ctx, s.db)
	if err != nil {
		return err
	}
	defer func() { h.End(err) }()
	return h.DB.Transaction(fn)
}

// writeEvents has the events the op emitted written with its COMMIT, in the same round trip
// (database.SendAtCommit; outbox.PrepareEvents' two statements), and sets *targeted, once the
// commit is in, to the ids of those an endpoint can receive.
func (o *op) writeEvents(targeted *[]uuid.UUID) error {
	if len(o.events) == 0 {
		return nil
	}
	w, err := outbox.PrepareEvents(o.events)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(database.Numbered(w.Lock), w.LockArgs...)
	b.Queue(database.Numbered(w.Insert), w.InsertArgs...)
	n := len(o.events)
	return database.SendAtCommit(o.tx, b, func(r pgx.BatchResults) error {
		if _, err := r.Exec(); err != nil {
			return fmt.Errorf("lock endpoints: %w", err)
		}
		rows, err := r.Query()
		if err != nil {
			return fmt.Errorf("write %d events: %w", n, err)
		}
		written, err := pgx.CollectRows(rows, pgx.RowToStructByPos[outbox.Written])
		if err != nil {
			return fmt.Errorf("write %d events: %w", n, err)
		}
		*targeted = w.Targeted(written)
		return nil
	})
}

// emit announces a change of this transaction; run writes the event with the others at commit.
func (o *op) emit(typ string, data any) error {
	store := o.store
	ev, err := outbox.NewEvent(o.org, &store, typ, data)
	if err != nil {
		return err
	}
	o.events = append(o.events, ev)
	return nil
}

// order loads the order as the APIs show it, inside the transaction so it reflects this op's writes.
func (o *op) order(id uuid.UUID) (*order.Order, error) {
	return order.Get(o.ctx, o.tx, o.scope(), id)
}

// notFound turns a missing row of the key's scope into the caller's 404.
func notFound(what string, id uuid.UUID) error {
	return problem.Fail(problem.NotFound, "%s %s not found", what, id)
}

// isNotFound reports a view's or a lookup's miss.
func isNotFound(err error) bool { return errors.Is(err, problem.NotFound) }

// An order create, the busiest write, is one path for the Integration API, the store-native
// receiver and an operator's order made by hand (app.go) alike: checkCreate's rules, then
// createOrder in a transaction of the op (Service.run) whose
// statements it sends together where it can. A create of a new order with a new client is two
// round trips:
//
//  1. BEGIN, the claim of the order's external_id (with the email's lock), the insert of its client
//     as a new one, and the insert of the order, its lines and its payment (sendCreate);
//  2. the endpoints lock, the events, and COMMIT (Service.run).
//
// The inserts are sent before the claim's answer is known, so each holds back unless what it
// depends on happened in this transaction: the claim was won (for a key, its external_refs row
// names this order; for an operator, no app order of the org holds the external id), and the
// client row exists. When they hold back (a repeated external_id, a client this key
// sent before, an email another client holds), the create goes on a statement at a time in the same
// transaction, by the client resolution rules and insertOrder.

// CreateOrder creates an order with its lines, client and inline payment, or returns the original with
// Duplicate set when the key already sent this external_id (no row change, no event).
func (s *Service) CreateOrder(ctx context.Context, key *models.IntegrationKey, in Order) (*OrderResult, error) {
	if in.Payment != nil && !key.HasScope(models.ScopePaymentsWrite) {
		return nil, problem.Fail(apikeys.ErrInsufficientScope, "a payment block needs the payments:write scope as well")
	}
	c, err := checkCreate(in, byKey) // bad input costs no turn at the database
	if err != nil {
		return nil, fmt.Errorf("create order: %w", err)
	}
	var res *OrderResult
	err = s.inTx(ctx, key, func(o *op) error {
		var err error
		res, err = o.createOrder(c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create order: %w", err)
	}
	return res, nil
}

// orderCreate is an order whose input passed the rules (checkCreate), with its totals and the
// status it starts in.
type orderCreate struct {
	Order
	totals totals
	status string
}

// writer is who writes an order: an integration key, or an operator working in the app.
type writer int

const (
	byKey writer = iota
	byOperator
)

// checkCreate applies the create's input rules to in, normalizing it. A key's order needs its
// external_id. An operator's may go without; its client's and payment's external ids are dropped,
// since external ids belong to keys, and its client's fields keep to the operator limits.
func checkCreate(in Order, w writer) (orderCreate, error) {
	if w == byOperator {
		if err := operatorOrder(&in); err != nil {
			return orderCreate{}, err
		}
	}
	t, err := in.normalize("", w == byKey)
	if err != nil {
		return orderCreate{}, err
	}
	status, err := initialStatus(t.total, in.Payment)
	if err != nil {
		return orderCreate{}, err
	}
	return orderCreate{Order: in, totals: t, status: status}, nil
}

// operatorOrder drops an operator's order's external ids other than its own and holds its client
// to the operator limits, on copies: in's blocks may be the caller's.
func operatorOrder(in *Order) error {
	if in.Client != nil {
		c := *in.Client
		c.ExternalID = ""
		if err := c.checkLimits("client"); err != nil {
			return err
		}
		in.Client = &c
	}
	if in.Payment != nil {
		p := *in.Payment
		p.ExternalID = ""
		in.Payment = &p
	}
	return nil
}

// createOrder creates the order of c in the op's transaction, or answers the original when the key
// sent its external_id before.
func (o *op) createOrder(c orderCreate) (*OrderResult, error) {
	id := uuid.New()
	var newClientID *uuid.UUID
	if c.Client != nil {
		cid := uuid.New()
		newClientID = &cid
	}
	sent, err := o.sendCreate(id, newClientID, c)
	if err != nil {
		return nil, err
	}
	if !sent.claim.Won {
		return o.repeatedOrder(c.ExternalID)
	}
	clientID, err := o.orderClient(c.Client, sent)
	if err != nil {
		return nil, err
	}
	v, pay, err := o.orderInserted(id, clientID, c, sent.order)
	if err != nil {
		return nil, err
	}
	return o.announceOrder(v, pay)
}

// repeatedOrder answers a create whose external_id the key sent before, or one of the org's app
// orders holds, with the original order.
func (o *op) repeatedOrder(externalID string) (*OrderResult, error) {
	if o.key == nil {
		return appOrderByExternal(o.ctx, o.tx, o.org, externalID)
	}
	id, err := o.lookupRef(entityOrder, externalID)
	if err != nil {
		return nil, err
	}
	return o.existingOrder(id)
}

// orderClient is the order's client, if it names one: the new client the first round trip
// inserted, or, when that insert held back, the client the resolution rules find or make, going on
// from the claim's lookup of the client's external id.
func (o *op) orderClient(in *Client, sent *createAnswers) (*uuid.UUID, error) {
	if in == nil {
		return nil, nil
	}
	c, err := o.insertedClient(sent.client)
	if err != nil {
		return nil, err
	}
	if c == nil {
		r, err := o.resolveFrom(*in, sent.claim.Client)
		if err != nil {
			return nil, err
		}
		c = &r
	}
	return &c.id, nil
}

// orderInserted is the order the first round trip inserted (sent) and its inline payment, or, when
// that insert held back for a client resolved since, the order inserted now for clientID.
func (o *op) orderInserted(id uuid.UUID, clientID *uuid.UUID, c orderCreate, sent *order.Order) (*order.Order, *order.Payment, error) {
	if sent == nil {
		return o.insertOrder(id, clientID, c.Order, c.totals, c.status)
	}
	return o.inserted(sent, c.Order)
}
