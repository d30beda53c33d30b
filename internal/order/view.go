package order

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
)

// Order is the order object of docs/integration-api.md, and the one definition of its shape: the SQL
// that loads it, the JSON PostgreSQL builds of its lines, payments and shipments, its Scan and its
// fast encoder all derive from these tags (shape.go). A test holds it to the schema the service
// serves.
type Order struct {
	ID                uuid.UUID  `json:"id" sql:"t.id"`
	Number            string     `json:"number" sql:"t.number"`
	Status            string     `json:"status" sql:"t.status"`
	FulfillmentStatus string     `json:"fulfillment_status" sql:"t.fulfillment_status"`
	StoreID           uuid.UUID  `json:"store_id" sql:"t.store_id"`
	ClientID          *uuid.UUID `json:"client_id" sql:"t.client_id"`
	ExternalID        *string    `json:"external_id" sql:"t.external_id"`
	Currency          string     `json:"currency" sql:"t.currency"`
	SubtotalCents     int64      `json:"subtotal_cents" sql:"t.subtotal_cents"`
	ShippingCents     int64      `json:"shipping_cents" sql:"t.shipping_cents"`
	TaxCents          int64      `json:"tax_cents" sql:"t.tax_cents"`
	TotalCents        int64      `json:"total_cents" sql:"t.total_cents"`
	AmountPaidCents   int64      `json:"amount_paid_cents" sql:"t.amount_paid_cents"`
	// Lines, Payments and Shipments are the JSON arrays PostgreSQL builds (orderArrays), passed
	// through as they are: decoding them only to encode them again was half of a list page's CPU. Use
	// PaymentList and ShipmentList to read them.
	Lines       json.RawMessage `json:"lines"`
	Payments    json.RawMessage `json:"payments"`
	Shipments   json.RawMessage `json:"shipments"`
	Metadata    json.RawMessage `json:"metadata" sql:"t.metadata"`
	Source      Source          `json:"source"`
	CreatedAt   time.Time       `json:"created_at" sql:"t.created_at"`
	UpdatedAt   time.Time       `json:"updated_at" sql:"t.updated_at"`
	CancelledAt *time.Time      `json:"cancelled_at" sql:"t.cancelled_at"`
}

// Line is a line of an order, as PostgreSQL builds it from a row of order_lines aliased l.
type Line struct {
	Description    string          `json:"description" sql:"l.description"`
	Quantity       int64           `json:"quantity" sql:"l.quantity"`
	UnitPriceCents int64           `json:"unit_price_cents" sql:"l.unit_price_cents"`
	TotalCents     int64           `json:"total_cents" sql:"l.quantity * l.unit_price_cents"`
	Metadata       json.RawMessage `json:"metadata" sql:"l.metadata"`
}

// Payment is a payment of an order, as PostgreSQL builds it from a row of payments aliased p.
type Payment struct {
	ID          uuid.UUID `json:"id" sql:"p.id"`
	OrderID     uuid.UUID `json:"order_id" sql:"p.order_id"`
	ExternalID  *string   `json:"external_id" sql:"p.external_id"`
	AmountCents int64     `json:"amount_cents" sql:"p.amount_cents"`
	Method      string    `json:"method" sql:"p.method"`
	// Provider and ProviderPaymentID are null when the payment did not name them (stored as '').
	Provider          *string    `json:"provider" sql:"NULLIF(p.provider, '')"`
	ProviderPaymentID *string    `json:"provider_payment_id" sql:"NULLIF(p.provider_payment_id, '')"`
	PaidAt            time.Time  `json:"paid_at" sql:"p.paid_at"`
	Refunded          bool       `json:"refunded" sql:"p.refunded_at IS NOT NULL"`
	RefundedAt        *time.Time `json:"refunded_at" sql:"p.refunded_at"`
	CreatedAt         time.Time  `json:"created_at" sql:"p.created_at"`
}

// Shipment is one parcel of an order (docs/cli.md, Workspace operations), as PostgreSQL builds it from
// a row of shipments aliased s.
type Shipment struct {
	ID             uuid.UUID  `json:"id" sql:"s.id"`
	OrderID        uuid.UUID  `json:"order_id" sql:"s.order_id"`
	Carrier        string     `json:"carrier" sql:"s.carrier"`
	TrackingNumber *string    `json:"tracking_number" sql:"s.tracking_number"`
	Status         string     `json:"status" sql:"s.status"`
	ShippedAt      time.Time  `json:"shipped_at" sql:"s.shipped_at"`
	DeliveredAt    *time.Time `json:"delivered_at" sql:"s.delivered_at"`
}

// Source says where an order came from; kind integration is the UI's "imported" badge.
type Source struct {
	Kind             string     `json:"kind" sql:"t.source_kind"`
	IntegrationKeyID *uuid.UUID `json:"integration_key_id" sql:"t.source_integration_key_id"`
	Label            *string    `json:"label" sql:"t.source_label"`
}

// orderShape is Order's shape; the fast encoder writes it.
var orderShape = shapeOf[Order]().encoder()

// relations names the relations an order is read from: its tables, or the CTEs of the statement that
// inserts one (Insert, below).
type relations struct {
	Orders, Lines, Payments string
	// Shipments is empty for an order just inserted, which has none.
	Shipments string
}

// orderArray is how PostgreSQL builds an array field of Order: object (an element type's
// json_build_object) per row of the relation from names, aliased as the element's sql tags expect,
// in order.
type orderArray struct {
	object, alias, orderBy string
	from                   func(relations) string
}

// orderArrays are Order's fields without an sql tag, by JSON key.
var orderArrays = map[string]orderArray{
	"lines":     {shapeOf[Line]().jsonObject(), "l", "l.position", func(r relations) string { return r.Lines }},
	"payments":  {shapeOf[Payment]().jsonObject(), "p", "p.created_at, p.id", func(r relations) string { return r.Payments }},
	"shipments": {shapeOf[Shipment]().jsonObject(), "s", "s.shipped_at, s.id", func(r relations) string { return r.Shipments }},
}

// sql is the array of order t's elements; an empty relation name means the order has none.
func (a orderArray) sql(r relations) string {
	from := a.from(r)
	if from == "" {
		return `'[]'::json`
	}
	return `(SELECT coalesce(json_agg(` + a.object + ` ORDER BY ` + a.orderBy + `), '[]') FROM ` +
		from + ` ` + a.alias + ` WHERE ` + a.alias + `.order_id = t.id)`
}

// selectOrders is the SELECT of orders as the APIs show them, one row per order of r.Orders (aliased
// t) with its lines, payments and shipments as JSON arrays in the same row, so a page of orders is one
// round trip. Its columns are orderShape's leaves, in order, which is how load scans them.
func selectOrders(r relations) string {
	cols := make([]string, len(orderShape.leaves))
	for i, l := range orderShape.leaves {
		switch a, isArray := orderArrays[l.key]; {
		case isArray && l.sql == "" && len(l.index) == 1:
			cols[i] = a.sql(r) + ` AS ` + l.key
		case !isArray && l.sql != "":
			cols[i] = l.sql
		default:
			panic(fmt.Sprintf("order: Order's %q needs either an sql tag or an orderArrays entry", l.key))
		}
	}
	return `SELECT ` + strings.Join(cols, ", ") + ` FROM ` + r.Orders + ` t`
}

// orderSelect loads orders from their tables.
var orderSelect = selectOrders(relations{Orders: "orders", Lines: "order_lines", Payments: "payments", Shipments: "shipments"})

// Get loads one order within scope.
func Get(ctx context.Context, db *gorm.DB, s paging.Scope, id uuid.UUID) (*Order, error) {
	cond, args := paging.ScopeFilter(s, "t.org_id", "t.store_id")
	orders, err := load(ctx, db, 1, orderSelect+" WHERE t.id = ? AND "+cond, append([]any{id}, args...)...)
	if err != nil {
		return nil, err
	}
	if len(orders) == 0 {
		return nil, problem.Fail(problem.NotFound, "order not found")
	}
	return &orders[0], nil
}

// List loads one page of orders.
func List(ctx context.Context, db *gorm.DB, q paging.ListQuery) (paging.Page[Order], error) {
	tail, args := paging.Keyset(q, "t.org_id", "t.store_id")
	var cut bool
	orders, err := loadWithin(ctx, db, q.Limit+1, paging.MaxPageBytes, &cut, orderSelect+tail, args...)
	if err != nil {
		return paging.Page[Order]{}, err
	}
	key := func(o Order) (time.Time, uuid.UUID) { return o.UpdatedAt, o.ID }
	if cut {
		return paging.CutPage(orders, key), nil
	}
	return paging.NewPage(orders, q.Limit, key), nil
}

// load runs a selectOrders query that returns at most n orders. It scans each row's columns straight
// into an Order: GORM's reflective scan was a quarter of wds serve's CPU per list page.
func load(ctx context.Context, db *gorm.DB, n int, query string, args ...any) ([]Order, error) {
	return loadWithin(ctx, db, n, 0, nil, query, args...)
}

// loadWithin is load that also stops, setting *cut, before the order that would take the orders'
// JSON past maxBytes (0: no bound); the first order is always kept. The rest of the query's rows (at
// most n) are read off the connection unscanned, so a page of fat orders costs this process its bound.
func loadWithin(ctx context.Context, db *gorm.DB, n, maxBytes int, cut *bool, query string, args ...any) ([]Order, error) {
	orders := make([]Order, 0, n)
	sc := newScanner()
	size := 0
	err := database.EachRow(ctx, db, query, args, func(row database.Row) error {
		if cut != nil && *cut {
			return nil
		}
		o, err := sc.scan(row)
		if err != nil {
			return err
		}
		size += o.jsonSize()
		if maxBytes > 0 && len(orders) > 0 && size > maxBytes {
			*cut = true
			return nil
		}
		orders = append(orders, o)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load orders: %w", err)
	}
	return orders, nil
}

// orderFields is more than the JSON of an order's fields other than its JSON columns takes.
const orderFields = 1024

// jsonSize is about the size of o's JSON: its JSON columns as stored, and its other fields.
func (o *Order) jsonSize() int {
	return len(o.Lines) + len(o.Payments) + len(o.Shipments) + len(o.Metadata) + orderFields
}

// Scan reads one order, a row of a query of orders (Statement's).
func Scan(row database.Row) (Order, error) { return newScanner().scan(row) }

// scanner reads orders row after row into one Order, whose Scan targets it finds once. The orders'
// JSON columns share its arena.
type scanner struct {
	o       Order
	arena   database.Arena
	targets []any
}

func newScanner() *scanner {
	s := &scanner{}
	s.targets = orderShape.targets(&s.o, &s.arena)
	return s
}

func (s *scanner) scan(row database.Row) (Order, error) {
	s.o = Order{} // no pointer of the previous row may be scanned into
	if err := row.Scan(s.targets...); err != nil {
		return Order{}, fmt.Errorf("scan order: %w", err)
	}
	toUTC(s.targets)
	return s.o, nil
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

// NewPayment is a payment: a new order's inline one, whose amount is the order's amount paid, or one
// AddPayment records later.
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
