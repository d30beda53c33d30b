package api

import (
	"gorm.io/gorm"

	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/deliverylog"
	"wds/internal/feed"
	"wds/internal/fulfillment"
	"wds/internal/ingest"
	"wds/internal/platform/ratelimit"
	"wds/internal/workspace"
)

// Services are the operations the handlers call, each a small interface declared beside the
// handlers that use it and satisfied by the domain services themselves (ingest, catalog,
// fulfillment, workspace, apikeys, deliverylog, ratelimit); only the Read API's reads and the readiness
// check are adapters of this package. NewServices wires them all; a handler test may set only those
// its requests reach (a handler calling a nil one panics, which the router answers 500).
type Services struct {
	ReadKeys    ReadKeyAuth      // auth.go
	Reads       ReadStore        // read.go
	Feed        EventFeed        // read_events.go
	Readiness   Readiness        // ready.go
	Operators   OperatorAuth     // operator.go
	Tokens      TokenStore       // operator_users.go
	Keys        KeyStore         // operator_keys.go
	KeyLists    KeyLists         // operator_keys.go
	Audit       AuditLog         // operator_keys.go
	Deliveries  DeliveryLog      // operator.go
	Vendors     VendorStore      // operator_vendors.go
	Shipping    ShippingStore    // operator_fulfillment.go
	AppOrders   AppOrderStore    // operator_apporders.go
	Gate        IntegrationGate  // integration.go
	Limits      RequestLimit     // integration.go
	Ingest      IngestStore      // integration.go
	Idempotency IdempotencyStore // integration.go
}

// Domain is the domain services the handlers call, built once per process by cmd/wds's composition
// root and shared with the console and the CLI, so every adapter reaches the same instances.
type Domain struct {
	Keys       *apikeys.Service
	People     *workspace.Service
	Orders     *ingest.Service
	Vendors    *catalog.Service
	Shipping   *fulfillment.Service
	KeyLists   *apikeys.KeyLists
	Audit      *workspace.AuditLog
	Deliveries *deliverylog.Service
	Feed       *feed.Service
}

// NewServices wires every service the handlers call to d's domain services, and the Read API's
// reads, the readiness check and the Integration API's rate limit to db.
func NewServices(db *gorm.DB, d Domain) Services {
	return Services{ReadKeys: d.Keys, Reads: admittedReads{db: db}, Feed: admittedFeed{db: db, feed: d.Feed}, Readiness: schemaReadiness{db: db},
		Operators: d.People, Tokens: d.People, Keys: d.Keys, KeyLists: d.KeyLists, Audit: d.Audit, Deliveries: d.Deliveries,
		Vendors: d.Vendors, Shipping: d.Shipping, AppOrders: d.Orders,
		Gate: d.Keys, Limits: ratelimit.NewLeased(db), Ingest: d.Orders, Idempotency: d.Orders}
}
