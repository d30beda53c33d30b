package ingest

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"wds/internal/apikeys"
	"wds/internal/order"
	"wds/internal/platform/database"
	"wds/internal/platform/problem"
	"wds/internal/views"
	"wds/models"
)

// An integration key's order create, the busiest write, is one path for the Integration API and the
// store-native receiver alike (createOrder), in a transaction of the op (Service.run) whose
// statements it sends together where it can. A create of a new order with a new client is two
// round trips:
//
//  1. BEGIN, the claim of the order's external_id (with the email's lock), the insert of its client
//     as a new one, and the insert of the order, its lines and its payment (sendCreate);
//  2. the endpoints lock, the events, and COMMIT (Service.run).
//
// The inserts are sent before the claim's answer is known, so each holds back unless what it
// depends on happened in this transaction: the claim was won (its external_refs row names this
// order), and the client row exists. When they hold back (a repeated external_id, a client this key
// sent before, an email another client holds), the create goes on a statement at a time in the same
// transaction, by the client resolution rules and insertOrder.

// CreateOrder creates an order with its lines, client and inline payment, or returns the original with
// Duplicate set when the key already sent this external_id (no row change, no event).
func (s *Service) CreateOrder(ctx context.Context, key *models.IntegrationKey, in Order) (*OrderResult, error) {
	if in.Payment != nil && !key.HasScope(models.ScopePaymentsWrite) {
		return nil, problem.Fail(apikeys.ErrInsufficientScope, "a payment block needs the payments:write scope as well")
	}
	c, err := checkCreate(in) // bad input costs no turn at the database
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

// orderCreate is an integration order whose input passed the rules (checkCreate), with its totals
// and the status it starts in.
type orderCreate struct {
	Order
	totals totals
	status string
}

// checkCreate applies the create's input rules to in, normalizing it.
func checkCreate(in Order) (orderCreate, error) {
	t, err := in.normalize("", true)
	if err != nil {
		return orderCreate{}, err
	}
	status, err := initialStatus(t.total, in.Payment)
	if err != nil {
		return orderCreate{}, err
	}
	return orderCreate{Order: in, totals: t, status: status}, nil
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

// repeatedOrder answers a create whose external_id the key sent before with the original order.
func (o *op) repeatedOrder(externalID string) (*OrderResult, error) {
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

// orderClaim is the answer of claimOrderSQL, one row.
type orderClaim struct {
	Won    bool
	Client uuid.NullUUID
	// Locks is there because the statement returns it: reading the email lock's CTE makes it run.
	Locks int64
}

// claimOrderSQL claims the order's external id for id, as claimRef does, and in the same statement
// does knownClient's work for the order's client, if any: with an email it takes the email's lock,
// and it looks up the client's external id. The lock is taken only once the claim is won (the CTE
// reads the claim's row), so a repeated create waits for nothing but the first one's claim, and
// the locks are taken in the order the two statements took them.
func (o *op) claimOrderSQL(externalID string, id uuid.UUID, client *Client) (string, []any) {
	var c Client
	if client != nil {
		c = *client
	}
	email := deref(c.Email)
	return claimOrderQuery, slices.Concat(o.ref(entityOrder, externalID).claimArgs(id), []any{o.emailLock(email), email},
		o.clientRefArgs(c.ExternalID))
}

var claimOrderQuery = `WITH claim AS (` + claimSQL("") + `),
	email_lock AS (
		SELECT pg_advisory_xact_lock(hashtextextended(?, 0)) FROM claim WHERE ? <> '')
	SELECT EXISTS (SELECT 1 FROM claim) AS won, (` + clientRefLookup + `) AS client,
		(SELECT count(*) FROM email_lock) AS locks -- a CTE nobody reads does not run`

// createAnswers is what the first round trip learned: the claim, and the client and order it
// inserted (nil: held back).
type createAnswers struct {
	claim  orderClaim
	client *views.Client
	order  *order.Order
}

// sendCreate sends the first round trip (createBatch) and reads its answers.
func (o *op) sendCreate(id uuid.UUID, clientID *uuid.UUID, c orderCreate) (*createAnswers, error) {
	b, err := o.createBatch(id, clientID, c)
	if err != nil {
		return nil, err
	}
	var a createAnswers
	err = database.Send(o.tx, b, func(r pgx.BatchResults) error {
		if err := r.QueryRow().Scan(&a.claim.Won, &a.claim.Client, &a.claim.Locks); err != nil {
			return fmt.Errorf("claim order external_id: %w", err)
		}
		var err error
		if c.Client != nil {
			if a.client, err = atMostOne(r, views.ScanClient); err != nil {
				return fmt.Errorf("insert client: %w", err)
			}
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

// createBatch is the first round trip's statements: the claim, the client's insert (with a client)
// and the order's, each insert held back unless the claim was won and, for the order, its client
// (clientID) exists.
func (o *op) createBatch(id uuid.UUID, clientID *uuid.UUID, c orderCreate) (*pgx.Batch, error) {
	// The claim's row names this order exactly when the claim was won.
	claimed := `EXISTS (` + lookupSQL + ` AND internal_id = ?)`
	claimedArgs := append(o.ref(entityOrder, c.ExternalID).lookupArgs(), id)
	b := &pgx.Batch{}
	claimQuery, claimArgs := o.claimOrderSQL(c.ExternalID, id, c.Client)
	b.Queue(database.Numbered(claimQuery), claimArgs...)
	if c.Client != nil {
		q, args, err := o.clientInsert(*c.Client, *clientID, claimed, claimedArgs...)
		if err != nil {
			return nil, err
		}
		b.Queue(database.Numbered(q+views.ClientReturning), args...)
	}
	n, g, err := o.newOrder(id, clientID, c.Order, c.totals, c.status)
	if err != nil {
		return nil, err
	}
	q, args := n.Statement(g, order.Condition{
		SQL:  claimed + ` AND (?::uuid IS NULL OR EXISTS (SELECT 1 FROM clients WHERE id = ?))`,
		Args: append(claimedArgs[:len(claimedArgs):len(claimedArgs)], database.NullableID(clientID), database.NullableID(clientID))})
	b.Queue(database.Numbered(q), args...)
	return b, nil
}

func scanOrder(row database.Row) (*order.Order, error) {
	v, err := order.Scan(row)
	return &v, err
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
