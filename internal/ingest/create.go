package ingest

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"wds/internal/apikeys"
	"wds/internal/order"
	"wds/internal/platform/problem"
	"wds/models"
)

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
