package ingest

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"wds/internal/order"
	"wds/internal/outbox"
	"wds/internal/platform/database"
	"wds/internal/views"
	"wds/models"
)

// The Integration API's order create, the busiest write, sends its statements in two round trips
// on pgx (database.Held) where GORM sends seven, one at a time:
//
//  1. BEGIN, the claim of the order's external_id (with the email's lock), the insert of its client
//     as a new one, and the insert of the order, its lines and its payment;
//  2. the endpoints lock, the events, and COMMIT.
//
// The rules are createOrder's, statement for statement. The client's and the order's inserts are
// sent before the claim's answer is known, so each holds back unless what it depends on happened in
// this transaction: the claim won (its external_refs row names this order), and the client row
// exists. When they hold back (a repeated external_id, a client this key sent before, an email
// another client holds), the create goes on as createOrder does, a statement at a time on the same
// connection, in the same transaction.

// createPiped is CreateOrder's transaction on pgx; it starts the events it committed.
func (s *Service) createPiped(ctx context.Context, key *models.IntegrationKey, in Order) (*OrderResult, error) {
	t, err := in.normalize("", true) // bad input costs no round trip
	if err != nil {
		return nil, err
	}
	status, err := initialStatus(t.total, in.Payment)
	if err != nil {
		return nil, err
	}
	res, ids, err := s.createOnce(ctx, key, in, t, status)
	if database.Retryable(err) {
		// The connection had died (PostgreSQL restarted) before the transaction committed anything;
		// database/sql would have tried another one too.
		res, ids, err = s.createOnce(ctx, key, in, t, status)
	}
	if err != nil {
		return nil, err
	}
	if s.events != nil && len(ids) > 0 {
		s.events.StartEvents(ctx, ids)
	}
	return res, nil
}

// createOnce runs the transaction on a held connection and returns the ids of the events to start.
func (s *Service) createOnce(ctx context.Context, key *models.IntegrationKey, in Order, t totals, status string) (res *OrderResult, ids []uuid.UUID, err error) {
	h, err := database.Hold(ctx, s.db)
	if err != nil {
		return nil, nil, err
	}
	defer func() { h.End(err) }()
	o := keyOp(ctx, h.DB, key)
	if res, err = o.createFirst(h, in, t, status); err != nil {
		return nil, nil, err
	}
	if ids, err = o.commit(h); err != nil {
		return nil, nil, err
	}
	return res, ids, nil
}

// createFirst sends the first round trip and completes the create from its answers.
func (o *op) createFirst(h *database.Held, in Order, t totals, status string) (*OrderResult, error) {
	id := uuid.New()
	var clientID *uuid.UUID
	if in.Client != nil {
		cid := uuid.New()
		clientID = &cid
	}
	b, err := o.firstBatch(id, clientID, in, t, status)
	if err != nil {
		return nil, err
	}
	first, err := readFirst(h, b, in.Client != nil)
	if err != nil {
		return nil, err
	}
	if !first.claim.Won {
		if id, err = o.lookupRef(entityOrder, in.ExternalID); err != nil {
			return nil, err
		}
		return o.existingOrder(id)
	}
	if in.Client != nil {
		c, err := o.insertedClient(first.client)
		if err != nil {
			return nil, err
		}
		if c == nil { // the client is not a new one: resolve it as createOrder does
			r, err := o.resolveFrom(*in.Client, first.claim.Client)
			if err != nil {
				return nil, err
			}
			c = &r
		}
		clientID = &c.id
	}
	var v *order.Order
	var pay *order.Payment
	if first.order == nil { // held back for the client resolved just now
		v, pay, err = o.insertOrder(id, clientID, in, t, status)
	} else {
		v, pay, err = o.inserted(first.order, in)
	}
	if err != nil {
		return nil, err
	}
	return o.announceOrder(v, pay)
}

// firstBatch is the first round trip: BEGIN, the claim, the client's insert (with a client) and
// the order's, each insert held back unless the claim was won and, for the order, its client exists.
func (o *op) firstBatch(id uuid.UUID, clientID *uuid.UUID, in Order, t totals, status string) (*pgx.Batch, error) {
	// The claim's row names this order exactly when the claim was won.
	claimed := `EXISTS (` + lookupSQL + ` AND internal_id = ?)`
	claimedArgs := append(o.ref(entityOrder, in.ExternalID).lookupArgs(), id)
	b := &pgx.Batch{}
	b.Queue("begin")
	claimQuery, claimArgs := o.claimOrderSQL(in.ExternalID, id, in.Client)
	b.Queue(database.Numbered(claimQuery), claimArgs...)
	if in.Client != nil {
		q, args, err := o.clientInsert(*in.Client, *clientID, claimed, claimedArgs...)
		if err != nil {
			return nil, err
		}
		b.Queue(database.Numbered(q+views.ClientReturning), args...)
	}
	n, g, err := o.newOrder(id, clientID, in, t, status)
	if err != nil {
		return nil, err
	}
	q, args := n.Statement(g, order.Condition{
		SQL:  claimed + ` AND (?::uuid IS NULL OR EXISTS (SELECT 1 FROM clients WHERE id = ?))`,
		Args: append(claimedArgs[:len(claimedArgs):len(claimedArgs)], database.NullableID(clientID), database.NullableID(clientID))})
	b.Queue(database.Numbered(q), args...)
	return b, nil
}

// firstAnswers is what the first round trip learned: the claim, and the client and order it
// inserted (nil: held back).
type firstAnswers struct {
	claim  orderClaim
	client *views.Client
	order  *order.Order
}

// readFirst sends firstBatch's batch and reads its answers.
func readFirst(h *database.Held, b *pgx.Batch, withClient bool) (*firstAnswers, error) {
	var a firstAnswers
	err := h.Send(b, func(r pgx.BatchResults) error {
		if _, err := r.Exec(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		if err := r.QueryRow().Scan(&a.claim.Won, &a.claim.Client, &a.claim.Locks); err != nil {
			return fmt.Errorf("claim order external_id: %w", err)
		}
		var err error
		if withClient {
			if a.client, err = atMostOne(r, views.ScanClient); err != nil {
				return fmt.Errorf("insert client: %w", err)
			}
		}
		scanOrder := func(row database.Row) (*order.Order, error) {
			v, err := order.Scan(row)
			return &v, err
		}
		if a.order, err = atMostOne(r, scanOrder); err != nil {
			return fmt.Errorf("insert order: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// atMostOne reads the rows of the batch's next statement, which returns one row or none.
func atMostOne[T any](r pgx.BatchResults, scan func(database.Row) (*T, error)) (*T, error) {
	rows, err := r.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var v *T
	for rows.Next() {
		if v != nil {
			return nil, fmt.Errorf("more than one row")
		}
		if v, err = scan(rows); err != nil {
			return nil, err
		}
	}
	return v, rows.Err()
}

// commit sends the second round trip, the op's events and COMMIT, and returns the ids of the events
// an endpoint can receive (outbox.WriteEvents).
func (o *op) commit(h *database.Held) ([]uuid.UUID, error) {
	b := &pgx.Batch{}
	var w *outbox.EventWrite
	if len(o.events) > 0 {
		var err error
		if w, err = outbox.PrepareEvents(o.events); err != nil {
			return nil, err
		}
		b.Queue(database.Numbered(w.Lock), w.LockArgs...)
		b.Queue(database.Numbered(w.Insert), w.InsertArgs...)
	}
	b.Queue("commit")
	var rows []outbox.Written
	err := h.Send(b, func(r pgx.BatchResults) error {
		if w != nil {
			if _, err := r.Exec(); err != nil {
				return fmt.Errorf("lock endpoints: %w", err)
			}
			got, err := r.Query()
			if err != nil {
				return fmt.Errorf("write %d events: %w", len(o.events), err)
			}
			if rows, err = pgx.CollectRows(got, pgx.RowToStructByPos[outbox.Written]); err != nil {
				return fmt.Errorf("write %d events: %w", len(o.events), err)
			}
		}
		if _, err := r.Exec(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	})
	if err != nil || w == nil {
		return nil, err
	}
	return w.Targeted(rows), nil
}
