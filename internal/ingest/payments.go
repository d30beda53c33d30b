package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/order"
	"wds/internal/platform/problem"
	"wds/models"
)

// PaymentResult answers POST /orders/{id}/payments (docs/integration-api.md).
type PaymentResult struct {
	ID              uuid.UUID `json:"id"`
	OrderID         uuid.UUID `json:"order_id"`
	ExternalID      string    `json:"external_id"`
	AmountCents     int64     `json:"amount_cents"`
	OrderStatus     string    `json:"order_status"`
	AmountPaidCents int64     `json:"amount_paid_cents"`
	Duplicate       bool      `json:"duplicate"`
}

// RefundResult answers POST /payments/{id}/refund (docs/integration-api.md).
type RefundResult struct {
	ID              uuid.UUID `json:"id"`
	OrderID         uuid.UUID `json:"order_id"`
	Refunded        bool      `json:"refunded"`
	AlreadyRefunded bool      `json:"already_refunded"`
	OrderStatus     string    `json:"order_status"`
	AmountPaidCents int64     `json:"amount_paid_cents"`
}

// paymentEvent is the data of payment events: the payment and its order (docs/webhooks.md).
type paymentEvent struct {
	Payment order.Payment `json:"payment"`
	Order   *order.Order  `json:"order"`
}

func (o *op) emitPayment(typ string, v *order.Order, paymentID uuid.UUID) error {
	p, err := paymentOf(v, paymentID)
	if err != nil {
		return err
	}
	return o.emit(typ, paymentEvent{Payment: p, Order: v})
}

func paymentOf(v *order.Order, paymentID uuid.UUID) (order.Payment, error) {
	payments, err := v.PaymentList()
	if err != nil {
		return order.Payment{}, err
	}
	for _, p := range payments {
		if p.ID == paymentID {
			return p, nil
		}
	}
	return order.Payment{}, fmt.Errorf("payment %s missing from order %s", paymentID, v.ID)
}

// paidAt is the payment's time, or nil for "now" in the database's clock.
func paidAt(p Payment) *time.Time {
	if p.PaidAt == nil {
		return nil
	}
	return &p.PaidAt.Time
}

// RecordPayment records a payment against an order of the key's store, or returns the original when
// the key already sent this payment external_id.
func (s *Service) RecordPayment(ctx context.Context, key *models.IntegrationKey, orderID uuid.UUID, in Payment) (*PaymentResult, error) {
	if err := in.normalize("", true); err != nil {
		return nil, err
	}
	var res *PaymentResult
	err := s.inTx(ctx, key, func(o *op) error {
		var err error
		res, err = o.recordPayment(orderID, in)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record payment: %w", err)
	}
	return res, nil
}

// lockedOrder is the part of an order a payment or refund decides on, read under a row lock so
// concurrent payments of one order apply one after the other.
type lockedOrder struct {
	Status          string
	TotalCents      int64
	AmountPaidCents int64
}

func (o *op) lockOrder(orderID uuid.UUID) (*lockedOrder, error) {
	var rows []lockedOrder
	err := o.tx.Raw(`SELECT status, total_cents, amount_paid_cents FROM orders
		WHERE id = ? AND org_id = ? AND store_id = ? FOR UPDATE`, orderID, o.org, o.store).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("lock order: %w", err)
	}
	if len(rows) == 0 {
		return nil, notFound("order", orderID)
	}
	return &rows[0], nil
}

func (o *op) recordPayment(orderID uuid.UUID, in Payment) (*PaymentResult, error) {
	id, won, err := o.claimRef(entityPayment, in.ExternalID, uuid.New())
	if err != nil {
		return nil, err
	}
	if !won {
		return o.existingPayment(id)
	}
	lo, err := o.lockOrder(orderID)
	if err != nil {
		return nil, err
	}
	if lo.Status == order.Cancelled || lo.Status == order.Refunded {
		return nil, problem.Fail(ErrOrderNotPayable, "order %s is %s", orderID, lo.Status)
	}
	status, err := statusAfterPayment(lo.TotalCents, lo.AmountPaidCents, in.AmountCents)
	if err != nil {
		return nil, err
	}
	p := order.NewPayment{ID: id, ExternalID: in.ExternalID, AmountCents: in.AmountCents,
		Method: in.Method, Provider: in.Provider, ProviderPaymentID: in.ProviderPaymentID, PaidAt: paidAt(in)}
	if err := order.AddPayment(o.ctx, o.tx, orderID, p, status); err != nil {
		return nil, err
	}
	v, err := o.order(orderID)
	if err != nil {
		return nil, err
	}
	if err := o.emitPayment(events.PaymentRecorded, v, id); err != nil {
		return nil, err
	}
	return &PaymentResult{ID: id, OrderID: orderID, ExternalID: in.ExternalID, AmountCents: in.AmountCents,
		OrderStatus: v.Status, AmountPaidCents: v.AmountPaidCents}, nil
}

// existingPayment answers a repeated payment external_id with the original payment.
func (o *op) existingPayment(id uuid.UUID) (*PaymentResult, error) {
	var rows []struct {
		OrderID     uuid.UUID
		ExternalID  string
		AmountCents int64
	}
	if err := o.tx.Raw(`SELECT order_id, external_id, amount_cents FROM payments WHERE id = ?`, id).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load payment: %w", err)
	}
	if len(rows) == 0 {
		return nil, notFound("payment", id)
	}
	v, err := o.order(rows[0].OrderID)
	if err != nil {
		return nil, err
	}
	return &PaymentResult{ID: id, OrderID: v.ID, ExternalID: rows[0].ExternalID, AmountCents: rows[0].AmountCents,
		OrderStatus: v.Status, AmountPaidCents: v.AmountPaidCents, Duplicate: true}, nil
}

// RefundPayment fully refunds a payment of the key's store. amountCents, when sent, must equal the
// payment's amount: version 1 has no partial refunds.
func (s *Service) RefundPayment(ctx context.Context, key *models.IntegrationKey, paymentID uuid.UUID, in Refund) (*RefundResult, error) {
	var res *RefundResult
	err := s.inTx(ctx, key, func(o *op) error {
		var err error
		res, err = o.refund(paymentID, in.AmountCents)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("refund payment: %w", err)
	}
	return res, nil
}

func (o *op) refund(paymentID uuid.UUID, amount *int64) (*RefundResult, error) {
	var rows []struct {
		OrderID     uuid.UUID
		AmountCents int64
		Refunded    bool
	}
	err := o.tx.Raw(`SELECT p.order_id, p.amount_cents, p.refunded_at IS NOT NULL AS refunded
		FROM payments p JOIN orders t ON t.id = p.order_id
		WHERE p.id = ? AND t.org_id = ? AND t.store_id = ? FOR UPDATE OF p, t`,
		paymentID, o.org, o.store).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("lock payment: %w", err)
	}
	if len(rows) == 0 {
		return nil, notFound("payment", paymentID)
	}
	p := rows[0]
	if amount != nil && *amount != p.AmountCents {
		return nil, problem.Fail(ErrPartialRefund,
			"amount_cents %d differs from the payment's %d; only full refunds are supported", *amount, p.AmountCents)
	}
	res := &RefundResult{ID: paymentID, OrderID: p.OrderID, Refunded: true, AlreadyRefunded: p.Refunded}
	if !p.Refunded {
		if err := order.Refund(o.ctx, o.tx, paymentID, p.OrderID, p.AmountCents); err != nil {
			return nil, err
		}
	}
	v, err := o.order(p.OrderID)
	if err != nil {
		return nil, err
	}
	if !p.Refunded {
		if err := o.emitPayment(events.PaymentRefunded, v, paymentID); err != nil {
			return nil, err
		}
		details := map[string]any{"order_id": p.OrderID, "amount_cents": p.AmountCents}
		if err := o.auditKey("payment.refund", "payment", paymentID, details); err != nil {
			return nil, err
		}
	}
	res.OrderStatus, res.AmountPaidCents = v.Status, v.AmountPaidCents
	return res, nil
}
