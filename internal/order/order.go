// Package order is the order: its statuses, its view (the one object the Read API, the Integration
// API and webhook payloads show, view.go, with the SQL that loads it and its fast JSON encoder, both
// derived from the view's struct tags, shape.go and json.go), its insert (view.go too: the order, its
// lines and its inline payment in one statement that answers the view) and every later change to an
// order or a payment (changes.go): this package alone writes orders and payments. The rules that
// decide what is written (totals, which status, external ids, clients) are its callers': ingest
// (creates, payments, cancels, refunds) and fulfillment (shipments).
package order

// Statuses of an order's payment life (docs/integration-api.md): a create starts it invoiced,
// partially_paid or paid, payments only move it forward, and a cancel or a full refund ends it.
const (
	Invoiced      = "invoiced"
	PartiallyPaid = "partially_paid"
	Paid          = "paid"
	Cancelled     = "cancelled"
	Refunded      = "refunded"
)

// Fulfillment statuses of an order (its fulfillment_status); Shipped and Delivered are also a
// shipment's status.
const (
	Unfulfilled = "unfulfilled"
	Shipped     = "shipped"
	Delivered   = "delivered"
)

// Sources of an order (its source.kind): pushed in by an integration key, or made by hand in the app.
const (
	SourceIntegration = "integration"
	SourceApp         = "app"
)
