package ingest

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"wds/internal/order"
	"wds/models"
)

// StoreAction is what a store platform order status asks for (docs/integration-api.md, "Store-native receiver
// status mapping").
type StoreAction int

// Store actions.
const (
	// StoreCreate creates the order without a payment (pending, on-hold, failed).
	StoreCreate StoreAction = iota + 1
	// StorePay creates the order with its payment, or pays the open balance of a known order
	// (processing, completed).
	StorePay
	// StoreCancel creates the order if unknown, then cancels it (cancelled).
	StoreCancel
	// StoreRefund creates the order with its payment if unknown, then refunds its payments (refunded).
	StoreRefund
)

// StoreOrder is a translated store-native order: the order as a generic create, the action its status
// maps to, and the payment the platform reports (used by StorePay and StoreRefund; nil when the
// order's total is zero). Its external_id should be stable per platform order, since a later
// "completed" must not pay twice.
type StoreOrder struct {
	Action  StoreAction
	Order   Order
	Payment *Payment
}

// StoreResult is the receiver's answer: the create envelope after the action, with Created when the
// order is new and Duplicate when the payload changed nothing.
type StoreResult struct {
	OrderResult
	Created bool `json:"-"`
}

// ApplyStoreOrder applies a store-native order idempotently in one transaction: an unknown order is
// created (with its payment when the status says it was paid), then a cancel or refund is applied; a
// known order gets only the transition its new status implies.
func (s *Service) ApplyStoreOrder(ctx context.Context, key *models.IntegrationKey, in StoreOrder) (*StoreResult, error) {
	var res *StoreResult
	err := s.inTx(ctx, key, func(o *op) error {
		var err error
		res, err = o.applyStore(in)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("apply store order: %w", err)
	}
	return res, nil
}

func (o *op) applyStore(in StoreOrder) (*StoreResult, error) {
	create := in.Order
	if in.Action == StorePay || in.Action == StoreRefund {
		create.Payment = in.Payment
	}
	c, err := checkCreate(create, byKey)
	if err != nil {
		return nil, err
	}
	r, err := o.createOrder(c)
	if err != nil {
		return nil, err
	}
	created := !r.Duplicate
	changed := created
	switch in.Action {
	case StorePay:
		if !created && in.Payment != nil {
			changed, err = o.payBalance(r.ID, *in.Payment)
		}
	case StoreCancel:
		var c *CancelResult
		c, err = o.cancel(r.ID)
		changed = changed || (err == nil && !c.AlreadyCancelled)
	case StoreRefund:
		var n int
		n, err = o.refundAll(r.ID)
		changed = changed || n > 0
	}
	if err != nil {
		return nil, err
	}
	v, err := o.order(r.ID)
	if err != nil {
		return nil, err
	}
	env, err := envelope(v, r.PaymentID)
	if err != nil {
		return nil, err
	}
	res := &StoreResult{OrderResult: *env, Created: created}
	res.Duplicate = !changed
	return res, nil
}

// payBalance records the platform's payment for whatever a known order still owes; an order that is
// paid, cancelled or refunded is left alone.
func (o *op) payBalance(orderID uuid.UUID, p Payment) (bool, error) {
	lo, err := o.lockOrder(orderID)
	if err != nil {
		return false, err
	}
	if lo.Status != order.Invoiced && lo.Status != order.PartiallyPaid {
		return false, nil
	}
	p.AmountCents = lo.TotalCents - lo.AmountPaidCents
	res, err := o.recordPayment(orderID, p)
	if err != nil {
		return false, err
	}
	return !res.Duplicate, nil
}

// refundAll fully refunds every unrefunded payment of the order and returns how many it refunded.
func (o *op) refundAll(orderID uuid.UUID) (int, error) {
	var ids []uuid.UUID
	err := o.tx.Raw(`SELECT id FROM payments WHERE order_id = ? AND refunded_at IS NULL ORDER BY created_at, id`,
		orderID).Find(&ids).Error
	if err != nil {
		return 0, fmt.Errorf("list payments: %w", err)
	}
	for _, id := range ids {
		if _, err := o.refund(id, nil); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
