package views

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"wds/problem"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Order is the order object of docs/integration-api.md.
type Order struct {
	ID                uuid.UUID  `json:"id"`
	Number            string     `json:"number"`
	Status            string     `json:"status"`
	FulfillmentStatus string     `json:"fulfillment_status"`
	StoreID           uuid.UUID  `json:"store_id"`
	ClientID          *uuid.UUID `json:"client_id"`
	ExternalID        *string    `json:"external_id"`
	Currency          string     `json:"currency"`
	SubtotalCents     int64      `json:"subtotal_cents"`
	ShippingCents     int64      `json:"shipping_cents"`
	TaxCents          int64      `json:"tax_cents"`
	TotalCents        int64      `json:"total_cents"`
	AmountPaidCents   int64      `json:"amount_paid_cents"`
	// Lines, Payments and Shipments are the JSON arrays PostgreSQL builds, passed through as they
	// are: decoding them only to encode them again was half of a list page's CPU. Use PaymentList
	// and ShipmentList to read them.
	Lines       json.RawMessage `json:"lines"`
	Payments    json.RawMessage `json:"payments"`
	Shipments   json.RawMessage `json:"shipments"`
	Metadata    json.RawMessage `json:"metadata"`
	Source      Source          `json:"source"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
	CancelledAt *time.Time      `json:"cancelled_at"`
}

// Payment is a payment of an order.
type Payment struct {
	ID                uuid.UUID  `json:"id"`
	OrderID           uuid.UUID  `json:"order_id"`
	ExternalID        *string    `json:"external_id"`
	AmountCents       int64      `json:"amount_cents"`
	Method            string     `json:"method"`
	Provider          string     `json:"provider"`
	ProviderPaymentID string     `json:"provider_payment_id"`
	PaidAt            time.Time  `json:"paid_at"`
	Refunded          bool       `json:"refunded"`
	RefundedAt        *time.Time `json:"refunded_at"`
	CreatedAt         time.Time  `json:"created_at"`
}

// Shipment is one parcel of an order (README.md, Workspace operations).
type Shipment struct {
	ID             uuid.UUID  `json:"id"`
	OrderID        uuid.UUID  `json:"order_id"`
	Carrier        string     `json:"carrier"`
	TrackingNumber *string    `json:"tracking_number"`
	Status         string     `json:"status"`
	ShippedAt      time.Time  `json:"shipped_at"`
	DeliveredAt    *time.Time `json:"delivered_at"`
}

// Source says where an order came from; kind integration is the UI's "imported" badge.
type Source struct {
	Kind             string     `json:"kind"`
	IntegrationKeyID *uuid.UUID `json:"integration_key_id"`
	Label            *string    `json:"label"`
}

// orderSelect loads orders as the APIs show them; lines, payments and shipments arrive as JSON
// arrays in the same row, so a page of orders is one round trip. loadOrders scans its columns in
// this order.
var orderSelect = `SELECT ` + orderColumns + `, ` + orderArrays("order_lines", "payments") + `, ` + shipmentArray + ` FROM orders t`

// orderColumns are an order's own columns, of a row named t.
const orderColumns = `t.id, t.number, t.status, t.fulfillment_status, t.store_id, t.client_id, t.external_id, t.currency,
	t.subtotal_cents, t.shipping_cents, t.tax_cents, t.total_cents, t.amount_paid_cents, t.metadata,
	t.source_kind, t.source_integration_key_id, t.source_label, t.created_at, t.updated_at, t.cancelled_at`

// orderArrays are the lines and payments of order t as JSON arrays, read from the tables (or CTEs)
// named lines and payments.
func orderArrays(lines, payments string) string {
	return `(SELECT coalesce(json_agg(json_build_object('description', l.description, 'quantity', l.quantity,
		'unit_price_cents', l.unit_price_cents, 'total_cents', l.quantity * l.unit_price_cents,
		'metadata', l.metadata) ORDER BY l.position), '[]')
		FROM ` + lines + ` l WHERE l.order_id = t.id) AS lines,
	(SELECT coalesce(json_agg(json_build_object('id', p.id, 'order_id', p.order_id,
		'external_id', p.external_id, 'amount_cents', p.amount_cents, 'method', p.method,
		'provider', p.provider, 'provider_payment_id', p.provider_payment_id, 'paid_at', ` + jsonTime("p.paid_at") + `,
		'refunded', p.refunded_at IS NOT NULL, 'refunded_at', ` + jsonTime("p.refunded_at") + `,
		'created_at', ` + jsonTime("p.created_at") + `)
		ORDER BY p.created_at, p.id), '[]')
		FROM ` + payments + ` p WHERE p.order_id = t.id) AS payments`
}

// shipmentArray is the shipments of order t as a JSON array, oldest first.
var shipmentArray = `(SELECT coalesce(json_agg(json_build_object('id', s.id, 'order_id', s.order_id,
		'carrier', s.carrier, 'tracking_number', s.tracking_number, 'status', s.status,
		'shipped_at', ` + jsonTime("s.shipped_at") + `, 'delivered_at', ` + jsonTime("s.delivered_at") + `)
		ORDER BY s.shipped_at, s.id), '[]')
		FROM shipments s WHERE s.order_id = t.id) AS shipments`

// InsertOrder runs with, the WITH clause of a statement that inserts one order in a CTE named o,
// its lines in one named lines and its payments in one named pay, each RETURNING *, and returns the
// order as GetOrder shows it, so a create needs no second statement to read it back, or nil when the
// insert skipped its row (ON CONFLICT DO NOTHING). A statement cannot read its own inserts from the
// tables, so the arrays are built from the CTEs.
func InsertOrder(ctx context.Context, db *gorm.DB, with string, args ...any) (*Order, error) {
	// A new order has no shipment yet: no need to look.
	orders, err := loadOrders(ctx, db, with+` SELECT `+orderColumns+`, `+orderArrays("lines", "pay")+`, '[]'::json AS shipments FROM o AS t`, args...)
	if err != nil {
		return nil, err
	}
	if len(orders) == 0 {
		return nil, nil
	}
	if len(orders) != 1 {
		return nil, fmt.Errorf("the insert returned %d orders, want 1", len(orders))
	}
	return &orders[0], nil
}

// GetOrder loads one order within scope.
func GetOrder(ctx context.Context, db *gorm.DB, s Scope, id uuid.UUID) (*Order, error) {
	cond, args := scopeFilter(s, "t.org_id", "t.store_id")
	orders, err := loadOrders(ctx, db, orderSelect+" WHERE t.id = ? AND "+cond, append([]any{id}, args...)...)
	if err != nil {
		return nil, err
	}
	if len(orders) == 0 {
		return nil, problem.Fail(problem.NotFound, "order not found")
	}
	return &orders[0], nil
}

// ListOrders loads one page of orders.
func ListOrders(ctx context.Context, db *gorm.DB, q ListQuery) (Page[Order], error) {
	tail, args := keyset(q, "t.org_id", "t.store_id")
	orders, err := loadOrders(ctx, db, orderSelect+tail, args...)
	if err != nil {
		return Page[Order]{}, err
	}
	return page(orders, q.Limit, func(o Order) (time.Time, uuid.UUID) { return o.UpdatedAt, o.ID }), nil
}

// loadOrders runs an orderSelect query. It scans each row's columns straight into an Order: GORM's
// reflective scan was a quarter of wds serve's CPU per list page.
func loadOrders(ctx context.Context, db *gorm.DB, query string, args ...any) ([]Order, error) {
	rows, err := db.WithContext(ctx).Raw(query, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("load orders: %w", err)
	}
	defer rows.Close()
	var orders []Order
	for rows.Next() {
		var o Order
		err := rows.Scan(&o.ID, &o.Number, &o.Status, &o.FulfillmentStatus, &o.StoreID, &o.ClientID, &o.ExternalID, &o.Currency,
			&o.SubtotalCents, &o.ShippingCents, &o.TaxCents, &o.TotalCents, &o.AmountPaidCents, &o.Metadata,
			&o.Source.Kind, &o.Source.IntegrationKeyID, &o.Source.Label, &o.CreatedAt, &o.UpdatedAt,
			&o.CancelledAt, &o.Lines, &o.Payments, &o.Shipments)
		if err != nil {
			return nil, fmt.Errorf("scan order: %w", err)
		}
		o.CreatedAt, o.UpdatedAt, o.CancelledAt = utc(o.CreatedAt), utc(o.UpdatedAt), utcPtr(o.CancelledAt)
		orders = append(orders, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load orders: %w", err)
	}
	return orders, nil
}

// PaymentList decodes the order's payments, oldest first.
func (o *Order) PaymentList() ([]Payment, error) {
	var ps []Payment
	if err := json.Unmarshal(o.Payments, &ps); err != nil {
		return nil, fmt.Errorf("decode payments of order %s: %w", o.ID, err)
	}
	return ps, nil
}

// ShipmentList decodes the order's shipments, oldest first.
func (o *Order) ShipmentList() ([]Shipment, error) {
	var ss []Shipment
	if err := json.Unmarshal(o.Shipments, &ss); err != nil {
		return nil, fmt.Errorf("decode shipments of order %s: %w", o.ID, err)
	}
	return ss, nil
}

// jsonTime formats a timestamptz column in SQL exactly as Go's encoding/json writes a UTC time.Time:
// PostgreSQL's JSON form of a timestamp is RFC 3339 with trailing fractional zeros dropped, so times
// inside the arrays PostgreSQL builds read the same as the order's own. NULL stays NULL. (No format
// string: pgbench, which replays this SQL as the benchmark's baseline, would take ":MI" for a variable.)
func jsonTime(col string) string {
	return `((to_json(` + col + ` AT TIME ZONE 'UTC') #>> '{}') || 'Z')`
}
