package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/order"
	"wds/internal/platform/problem"
	"wds/models"
)

// OrderResult is the create envelope (docs/integration-api.md).
type OrderResult struct {
	ID              uuid.UUID  `json:"id"`
	Number          string     `json:"number"`
	Status          string     `json:"status"`
	TotalCents      int64      `json:"total_cents"`
	AmountPaidCents int64      `json:"amount_paid_cents"`
	ClientID        *uuid.UUID `json:"client_id"`
	ExternalID      string     `json:"external_id"`
	PaymentID       *uuid.UUID `json:"payment_id,omitempty"`
	Duplicate       bool       `json:"duplicate"`
}

// initialStatus is the order-status table's rows for a new integration order: integration orders skip
// draft; with a payment the amount decides, without one a zero total is already paid.
func initialStatus(total int64, payment *Payment) (string, error) {
	if payment == nil {
		if total == 0 {
			return order.Paid, nil
		}
		return order.Invoiced, nil
	}
	return statusAfterPayment(total, 0, payment.AmountCents)
}

// statusAfterPayment applies one payment of amount to an order with paid already received. Payments
// only move an order forward: invoiced, partially_paid, paid.
func statusAfterPayment(total, paid, amount int64) (string, error) {
	if amount > total-paid {
		return "", problem.Fail(ErrAmountExceedsBalance,
			"amount_cents %d exceeds the open balance of %d", amount, total-paid)
	}
	if paid+amount == total {
		return order.Paid, nil
	}
	return order.PartiallyPaid, nil
}

// existingOrder answers a repeated external_id with the original record.
func (o *op) existingOrder(id uuid.UUID) (*OrderResult, error) {
	v, err := o.order(id)
	if err != nil {
		return nil, err
	}
	return duplicateOf(v)
}

// duplicateOf is the create envelope answering a repeated create with its original order v.
func duplicateOf(v *order.Order) (*OrderResult, error) {
	res, err := envelope(v, nil)
	if err != nil {
		return nil, err
	}
	res.Duplicate = true
	return res, nil
}

// announceOrder writes order.created (and payment.recorded for its inline payment pay) for the new
// order v.
func (o *op) announceOrder(v *order.Order, pay *order.Payment) (*OrderResult, error) {
	if err := o.emit(events.OrderCreated, v); err != nil {
		return nil, err
	}
	if pay == nil {
		return envelope(v, nil)
	}
	if err := o.emit(events.PaymentRecorded, paymentEvent{Payment: *pay, Order: v}); err != nil {
		return nil, err
	}
	return envelope(v, &pay.ID)
}

// envelope renders an order as the create envelope; paymentID is the inline payment, if any.
func envelope(v *order.Order, paymentID *uuid.UUID) (*OrderResult, error) {
	res := &OrderResult{ID: v.ID, Number: v.Number, Status: v.Status, TotalCents: v.TotalCents,
		AmountPaidCents: v.AmountPaidCents, ClientID: v.ClientID, PaymentID: paymentID}
	if v.ExternalID != nil {
		res.ExternalID = *v.ExternalID
	}
	if paymentID == nil {
		payments, err := v.PaymentList()
		if err != nil {
			return nil, err
		}
		if len(payments) > 0 {
			res.PaymentID = &payments[0].ID
		}
	}
	return res, nil
}

// insertOrder writes the order, all its lines and its inline payment, if any, in one statement
// (order.Insert) and returns the order as the APIs show it and its inline payment, if any. An empty
// currency takes the store's. A payment external_id is claimed in the same statement; one the key
// already used for another payment is a conflict, not a duplicate (this call is not a repeat of that
// payment's create), and the caller's rollback undoes the order. An app order whose external_id the
// org's app orders already hold inserts nothing: errExternalIDTaken.
func (o *op) insertOrder(id uuid.UUID, clientID *uuid.UUID, in Order, t totals, status string) (*order.Order, *order.Payment, error) {
	n, g, err := o.newOrder(id, clientID, in, t, status)
	if err != nil {
		return nil, nil, err
	}
	v, err := order.Insert(o.ctx, o.tx, n, g)
	if err != nil {
		return nil, nil, err
	}
	return o.inserted(v, in)
}

// newOrder is the order insertOrder writes, and the claim of its payment's external_id that the
// payment waits on. App orders claim no payment external_id (app writes have no key to claim it for:
// the caller clears it), so their claim inserts nothing. An integration order's own external_id was
// claimed before, in external_refs; an app order's is unique among the org's app orders
// (order.New).
func (o *op) newOrder(id uuid.UUID, clientID *uuid.UUID, in Order, t totals, status string) (order.New, order.Guard, error) {
	meta, err := jsonObject(in.Metadata)
	if err != nil {
		return order.New{}, order.Guard{}, err
	}
	n := order.New{ID: id, OrgID: o.org, StoreID: o.store, ClientID: clientID, Currency: in.Currency,
		SubtotalCents: t.subtotal, ShippingCents: in.ShippingCents, TaxCents: in.TaxCents, TotalCents: t.total,
		Status: status, Metadata: meta, Source: order.SourceApp, Lines: make([]order.NewLine, len(in.Lines))}
	if in.ExternalID != "" { // an app order may have none
		n.ExternalID = &in.ExternalID
	}
	if o.key != nil {
		n.Source, n.IntegrationKeyID, n.Label = order.SourceIntegration, &o.key.ID, o.key.Label
	}
	for i, l := range in.Lines {
		n.Lines[i] = order.NewLine{Description: l.Description, Quantity: l.Quantity, UnitPriceCents: l.UnitPriceCents}
		if n.Lines[i].Metadata, err = jsonObject(l.Metadata); err != nil {
			return order.New{}, order.Guard{}, err
		}
	}
	var p Payment
	if in.Payment != nil {
		p = *in.Payment
		n.Payment = &order.NewPayment{ID: uuid.New(), ExternalID: p.ExternalID, AmountCents: p.AmountCents,
			Method: p.Method, Provider: p.Provider, ProviderPaymentID: p.ProviderPaymentID, PaidAt: paidAt(p)}
	}
	paymentID := uuid.Nil
	if n.Payment != nil {
		paymentID = n.Payment.ID
	}
	g := order.Guard{SQL: paymentClaim, Args: append(o.ref(entityPayment, p.ExternalID).claimArgs(paymentID), p.ExternalID),
		Guarded: p.ExternalID != ""}
	return n, g, nil
}

// paymentClaim claims a new order's payment external_id (order.Guard), if it has one.
var paymentClaim = claimSQL(`FROM new_order WHERE ? <> ''`)

// inserted is insertOrder's answer for the order v the insert returned (nil: errExternalIDTaken).
func (o *op) inserted(v *order.Order, in Order) (*order.Order, *order.Payment, error) {
	if v == nil {
		return nil, nil, errExternalIDTaken
	}
	if in.Payment == nil {
		return v, nil, nil
	}
	payments, err := v.PaymentList()
	if err != nil {
		return nil, nil, err
	}
	if len(payments) == 0 { // the claim of its external_id failed, so the payment was not inserted
		return nil, nil, problem.Fail(problem.Conflict, "payment external_id %q is already recorded for another payment", in.Payment.ExternalID)
	}
	return v, &payments[0], nil // a new order has no other payment
}

// errExternalIDTaken: the org's app orders already hold this external_id (a repeated create).
var errExternalIDTaken = errors.New("external_id already taken")

// jsonObject encodes a metadata object; absent is {}.
func jsonObject(m map[string]any) (string, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode metadata: %w", err)
	}
	return string(b), nil
}

// OrderByExternal finds the key's order by the caller's external_id (external ids are per key).
func (s *Service) OrderByExternal(ctx context.Context, key *models.IntegrationKey, externalID string) (*order.Order, error) {
	if !Storable(externalID) {
		return nil, problem.Fail(problem.NotFound, "no order with this external_id")
	}
	id, err := lookupRef(ctx, s.db, key, entityOrder, externalID)
	if err != nil {
		return nil, err
	}
	return order.Get(ctx, s.db, scope(key), id)
}

// CancelResult answers POST /orders/{id}/cancel.
type CancelResult struct {
	ID               uuid.UUID `json:"id"`
	Status           string    `json:"status"`
	AlreadyCancelled bool      `json:"already_cancelled"`
}

// CancelOrder cancels an order of the key's store whatever its payment state; cancelling a cancelled
// order changes nothing and says so.
func (s *Service) CancelOrder(ctx context.Context, key *models.IntegrationKey, orderID uuid.UUID) (*CancelResult, error) {
	var res *CancelResult
	err := s.inTx(ctx, key, func(o *op) error {
		var err error
		res, err = o.cancel(orderID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cancel order: %w", err)
	}
	return res, nil
}

func (o *op) cancel(orderID uuid.UUID) (*CancelResult, error) {
	cancelled, err := order.Cancel(o.ctx, o.tx, orderID, o.org, o.store)
	if err != nil {
		return nil, err
	}
	v, err := o.order(orderID)
	if isNotFound(err) {
		return nil, notFound("order", orderID)
	}
	if err != nil {
		return nil, err
	}
	if !cancelled {
		return &CancelResult{ID: orderID, Status: v.Status, AlreadyCancelled: true}, nil
	}
	if err := o.emit(events.OrderCancelled, v); err != nil {
		return nil, err
	}
	if err := o.auditKey("order.cancel", "order", orderID, map[string]any{}); err != nil {
		return nil, err
	}
	return &CancelResult{ID: orderID, Status: v.Status}, nil
}
