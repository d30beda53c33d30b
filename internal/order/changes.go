package order

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// The statements below are every change to an order or a payment after its create, each inside the
// caller's transaction with the order already locked. What they write (which status, which amount)
// is decided by their callers' rules: ingest's for payments, cancels and refunds, fulfillment's for
// shipments.

// Cancel marks an order of the store cancelled now, unless it already is (or there is no such
// order): false then.
func Cancel(ctx context.Context, tx *gorm.DB, id, orgID, storeID uuid.UUID) (bool, error) {
	r := tx.WithContext(ctx).Exec(`UPDATE orders SET status = 'cancelled', cancelled_at = clock_timestamp()
		WHERE id = ? AND org_id = ? AND store_id = ? AND status <> 'cancelled'`, id, orgID, storeID)
	if r.Error != nil {
		return false, fmt.Errorf("cancel order: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// AddPayment writes a payment of an existing order and adds it to the order's paid amount, moving
// the order to status. The payment's external id, if any, is already claimed by the caller's
// transaction.
func AddPayment(ctx context.Context, tx *gorm.DB, orderID uuid.UUID, p NewPayment, status string) error {
	err := tx.WithContext(ctx).Exec(`INSERT INTO payments (id, order_id, external_id, amount_cents, method, provider,
		provider_payment_id, paid_at) VALUES (?, ?, nullif(?, ''), ?, ?, ?, ?, coalesce(?, clock_timestamp()))`,
		p.ID, orderID, p.ExternalID, p.AmountCents, p.Method, p.Provider, p.ProviderPaymentID, p.PaidAt).Error
	if err != nil {
		return fmt.Errorf("insert payment: %w", err)
	}
	err = tx.WithContext(ctx).Exec(`UPDATE orders SET amount_paid_cents = amount_paid_cents + ?, status = ? WHERE id = ?`,
		p.AmountCents, status, orderID).Error
	if err != nil {
		return fmt.Errorf("update order: %w", err)
	}
	return nil
}

// Refund flags the payment refunded and takes its amount off the order's paid amount. The order's
// status follows from what is left: a cancelled order stays cancelled, nothing left paid is
// refunded, something left is partially_paid.
func Refund(ctx context.Context, tx *gorm.DB, paymentID, orderID uuid.UUID, amount int64) error {
	if err := tx.WithContext(ctx).Exec(`UPDATE payments SET refunded_at = clock_timestamp() WHERE id = ?`, paymentID).Error; err != nil {
		return fmt.Errorf("mark payment refunded: %w", err)
	}
	err := tx.WithContext(ctx).Exec(`UPDATE orders SET amount_paid_cents = amount_paid_cents - ?,
		status = CASE WHEN status = 'cancelled' THEN status
			WHEN amount_paid_cents - ? = 0 THEN 'refunded' ELSE 'partially_paid' END
		WHERE id = ?`, amount, amount, orderID).Error
	if err != nil {
		return fmt.Errorf("update order: %w", err)
	}
	return nil
}

// SetFulfillment writes the order's fulfillment status; writing it even unchanged advances the
// order's updated_at, as every change to an order's shipments must.
func SetFulfillment(ctx context.Context, tx *gorm.DB, orderID uuid.UUID, status string) error {
	if err := tx.WithContext(ctx).Exec(`UPDATE orders SET fulfillment_status = ? WHERE id = ?`, status, orderID).Error; err != nil {
		return fmt.Errorf("update order: %w", err)
	}
	return nil
}
