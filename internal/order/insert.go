package order

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/database"
)

// New is an order to insert, with its lines and its inline payment, as its writer decided them.
type New struct {
	ID, OrgID, StoreID                                 uuid.UUID
	ClientID                                           *uuid.UUID
	ExternalID                                         *string // an app order may have none
	Currency                                           string  // empty: the store's
	SubtotalCents, ShippingCents, TaxCents, TotalCents int64
	Status                                             string
	Metadata                                           string // a JSON object
	// Source is SourceIntegration, with the key's id and label, or SourceApp. An app order's
	// external_id is unique among the org's app orders: a second insert of one inserts nothing.
	Source           string
	IntegrationKeyID *uuid.UUID
	Label            string
	Lines            []NewLine
	Payment          *NewPayment
}

// NewLine is a line of a new order; Metadata is a JSON object.
type NewLine struct {
	Description              string
	Quantity, UnitPriceCents int64
	Metadata                 string
}

// NewPayment is a new order's inline payment; its amount is the order's amount paid.
type NewPayment struct {
	ID                                  uuid.UUID
	ExternalID                          string
	AmountCents                         int64
	Method, Provider, ProviderPaymentID string
	PaidAt                              *time.Time // nil: now
}

// Guard is a statement the inline payment waits on: when Guarded, the payment is inserted only if
// SQL (a data-modifying statement, which may read the new order from new_order) returns a row. ingest
// claims the payment's external id with it. Its SQL must not change from call to call, so the insert
// is one prepared statement.
type Guard struct {
	SQL     string
	Args    []any
	Guarded bool
}

// newRows names the CTEs of the insert that return the new order, its lines and its payment, which
// the view is read from: a statement cannot read its own inserts from the tables. A new order has no
// shipment.
var newRows = relations{Orders: "new_order", Lines: "new_lines", Payments: "new_payment"}

// Condition is a boolean SQL expression and its arguments.
type Condition struct {
	SQL  string
	Args []any
}

// always is the Condition of an insert that nothing but its own conflict stops.
var always = Condition{SQL: "true"}

// insertSQL is the insert of each source, with the payment's guard and the insert's condition,
// built once for each: the statement is long, and sent again and again.
func insertSQL(source, guard, only string) string {
	key := source + "\x00" + guard + "\x00" + only
	if s, ok := statements.Load(key); ok {
		return s.(string)
	}
	s := buildInsert(source, guard, only)
	statements.Store(key, s)
	return s
}

// statements caches insertSQL; its callers pass constant SQL, so it holds a few statements.
var statements sync.Map

func buildInsert(source, guard, only string) string {
	var onConflict string
	if source == SourceApp { // migrations/00009's partial unique index settles a race of app creates
		onConflict = `
		ON CONFLICT (org_id, external_id) WHERE source_kind = 'app' AND external_id IS NOT NULL DO NOTHING`
	}
	order, lines, pay := newRows.Orders, newRows.Lines, newRows.Payments
	return `WITH ` + order + ` AS (
		INSERT INTO orders (id, org_id, store_id, number, client_id, external_id, currency,
			subtotal_cents, shipping_cents, tax_cents, total_cents, amount_paid_cents, status, metadata,
			source_kind, source_integration_key_id, source_label)
		SELECT ?, ?, ?, nextval(wds_order_number_sequence(?)::regclass), ?, ?,
			coalesce(nullif(?, ''), (SELECT currency FROM stores WHERE id = ?)),
			?, ?, ?, ?, ?, ?, ?, ?, ?, nullif(?, '')
		WHERE ` + only + onConflict + `
		RETURNING *),
	` + lines + ` AS (
		INSERT INTO order_lines (order_id, position, description, quantity, unit_price_cents, metadata)
		SELECT o.id, l.ord - 1, l.description, l.quantity, l.unit_price_cents, l.metadata
		FROM ` + order + ` o, unnest(?::text[], ?::bigint[], ?::bigint[], ?::jsonb[])
			WITH ORDINALITY AS l(description, quantity, unit_price_cents, metadata, ord)
		RETURNING *),
	guard AS (` + guard + `),
	` + pay + ` AS (
		INSERT INTO payments (id, order_id, external_id, amount_cents, method, provider, provider_payment_id, paid_at)
		SELECT ?, o.id, nullif(?, ''), ?, ?, ?, ?, coalesce(?, clock_timestamp()) FROM ` + order + ` o
		WHERE ?::boolean AND (NOT ?::boolean OR EXISTS (SELECT 1 FROM guard))
		RETURNING *)
	` + selectOrders(newRows)
}

// Statement is the one statement that inserts n, all its lines (they travel as arrays, so their
// number adds no round trip) and its inline payment, if only holds, and answers the order as Get
// shows it, one row (Scan reads it), or no row when it inserted nothing (only did not hold, or an app
// order's external_id was taken). The number comes from the org's own sequence, which never waits
// for another transaction, so creates in one org do not serialize; an order not inserted takes
// none. Statement is for a writer that sends it in a batch with others; Insert runs it alone.
func (n New) Statement(g Guard, only Condition) (string, []any) {
	desc, qty, price, meta := make([]string, len(n.Lines)), make([]int64, len(n.Lines)),
		make([]int64, len(n.Lines)), make([]string, len(n.Lines))
	for i, l := range n.Lines {
		desc[i], qty[i], price[i], meta[i] = l.Description, l.Quantity, l.UnitPriceCents, l.Metadata
	}
	var p NewPayment
	if n.Payment != nil {
		p = *n.Payment
	}
	return insertSQL(n.Source, g.SQL, only.SQL), slices.Concat([]any{n.ID, n.OrgID, n.StoreID, n.OrgID, database.NullableID(n.ClientID),
		n.ExternalID, n.Currency, n.StoreID, n.SubtotalCents, n.ShippingCents, n.TaxCents, n.TotalCents,
		p.AmountCents, n.Status, n.Metadata, n.Source, database.NullableID(n.IntegrationKeyID), n.Label},
		only.Args,
		[]any{database.Array(desc), database.Array(qty), database.Array(price), database.Array(meta)},
		g.Args,
		[]any{p.ID, p.ExternalID, p.AmountCents, p.Method, p.Provider, p.ProviderPaymentID, p.PaidAt,
			n.Payment != nil, g.Guarded})
}

// Insert runs n's Statement, always inserting, and returns the order as Get shows it, or nil when the insert skipped
// it (an app order's external_id taken).
func Insert(ctx context.Context, db *gorm.DB, n New, g Guard) (*Order, error) {
	sql, args := n.Statement(g, always)
	orders, err := load(ctx, db, 1, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("insert order: %w", err)
	}
	switch len(orders) {
	case 0:
		return nil, nil
	case 1:
		return &orders[0], nil
	default:
		return nil, fmt.Errorf("insert order: %d orders returned, want 1", len(orders))
	}
}
