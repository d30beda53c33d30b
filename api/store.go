package api

import (
	"gorm.io/gorm"

	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/fulfillment"
	"wds/internal/ingest"
	"wds/internal/operator"
	"wds/internal/platform/ratelimit"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
)

// Stores are the operations the handlers call, each a small interface declared beside the handlers
// that use it and satisfied by the domain services themselves (ingest, catalog, fulfillment,
// workspace, apikeys, operator, ratelimit); only the Read API's reads and the readiness check are
// adapters of this package. DBStores wires them all to PostgreSQL; a handler test may set only those
// its requests reach (a handler calling a nil one panics, which the router answers 500).
type Stores struct {
	ReadKeys    ReadKeyAuth      // auth.go
	Reads       ReadStore        // read.go
	Readiness   Readiness        // ready.go
	Operators   OperatorAuth     // operator.go
	Tokens      TokenStore       // operator_users.go
	Keys        KeyStore         // operator_keys.go
	Lists       OrgLists         // operator_keys.go
	Vendors     VendorStore      // operator_vendors.go
	Shipping    ShippingStore    // operator_fulfillment.go
	AppOrders   AppOrderStore    // operator_apporders.go
	Gate        IntegrationGate  // integration.go
	Limits      RequestLimit     // integration.go
	Ingest      IngestStore      // integration.go
	Idempotency IdempotencyStore // integration_idempotency.go
}

// EventStarter is what the domain services are given to start the events they commit
// (worker.Starter): each declares it, and one starter serves them all.
type EventStarter interface {
	ingest.EventStarter
	catalog.EventStarter
	fulfillment.EventStarter
}

// DBStores wires every store to the domain services over db. box seals and opens integration keys'
// signing secrets; nil refuses to mint keys that require signatures and rejects their requests.
// events starts what each write committed as soon as it commits; nil leaves the events to the
// worker's relay.
func DBStores(db *gorm.DB, box *secrets.Box, events EventStarter) Stores {
	keys := apikeys.NewService(db, box)
	people := workspace.NewService(db)
	orders := ingest.NewService(db, events)
	return Stores{ReadKeys: keys, Reads: admittedReads{db: db}, Readiness: schemaReadiness{db: db},
		Operators: people, Tokens: people, Keys: keys, Lists: operator.NewService(db),
		Vendors: catalog.NewService(db, events), Shipping: fulfillment.NewService(db, events), AppOrders: orders,
		Gate: keys, Limits: ratelimit.NewLeased(db), Ingest: orders, Idempotency: orders}
}
