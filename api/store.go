package api

import (
	"context"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/apikeys"
	"wds/database"
	"wds/migrations"
	"wds/models"
	"wds/problem"
	"wds/ratelimit"
	"wds/secrets"
	"wds/views"
	"wds/workspace"
)

// Stores are the operations the handlers call, each a small interface declared beside the handlers
// that use it. DBStores wires them all to PostgreSQL; a handler test may set only those its
// requests reach (a handler calling a nil one panics, which the router answers 500).
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
	Ingest      IngestStore      // integration.go
	Idempotency IdempotencyStore // integration_idempotency.go
}

// DBStores wires every store to the operations packages over db. box seals and opens integration
// keys' signing secrets; nil refuses to mint keys and rejects keys that require signatures.
func DBStores(db *gorm.DB, box *secrets.Box) Stores {
	st := &dbStore{db: db, box: box, limiter: ratelimit.NewLeased(db)}
	return Stores{ReadKeys: st, Reads: st, Readiness: st, Operators: st, Tokens: st, Keys: st, Lists: st,
		Vendors: st, Shipping: st, AppOrders: st, Gate: st, Ingest: st, Idempotency: st}
}

// dbStore is the thin adapter from the handlers' interfaces to the operations packages, which take
// the database as an argument; it holds no rules of its own.
type dbStore struct {
	db      *gorm.DB
	box     *secrets.Box
	limiter *ratelimit.Leased
}

// admitted runs a read in its turn at the database (database.Admit), so that the Read API's queries
// queue with the writes' transactions instead of crowding the CPUs; the turn ends when the read
// returns, before the answer is written.
func admitted[T any](ctx context.Context, db *gorm.DB, read func() (T, error)) (T, error) {
	release, err := database.Admit(ctx, db)
	if err != nil {
		var zero T
		return zero, err
	}
	defer release()
	return read()
}

func (s *dbStore) ListOrders(ctx context.Context, q views.ListQuery) (views.Page[views.Order], error) {
	return admitted(ctx, s.db, func() (views.Page[views.Order], error) { return views.ListOrders(ctx, s.db, q) })
}

func (s *dbStore) GetOrder(ctx context.Context, sc views.Scope, id uuid.UUID) (*views.Order, error) {
	return admitted(ctx, s.db, func() (*views.Order, error) { return views.GetOrder(ctx, s.db, sc, id) })
}

func (s *dbStore) ListVendors(ctx context.Context, q views.ListQuery) (views.Page[views.Vendor], error) {
	return admitted(ctx, s.db, func() (views.Page[views.Vendor], error) { return views.ListVendors(ctx, s.db, q) })
}

func (s *dbStore) GetVendor(ctx context.Context, sc views.Scope, id uuid.UUID) (*views.Vendor, error) {
	return admitted(ctx, s.db, func() (*views.Vendor, error) { return views.GetVendor(ctx, s.db, sc, id) })
}

func (s *dbStore) ListClients(ctx context.Context, q views.ListQuery) (views.Page[views.Client], error) {
	return admitted(ctx, s.db, func() (views.Page[views.Client], error) { return views.ListClients(ctx, s.db, q) })
}

func (s *dbStore) GetClient(ctx context.Context, sc views.Scope, id uuid.UUID) (*views.Client, error) {
	return admitted(ctx, s.db, func() (*views.Client, error) { return views.GetClient(ctx, s.db, sc, id) })
}

func (s *dbStore) ListProducts(ctx context.Context, q views.ListQuery) (views.Page[views.Product], error) {
	return admitted(ctx, s.db, func() (views.Page[views.Product], error) { return views.ListProducts(ctx, s.db, q) })
}

func (s *dbStore) GetProduct(ctx context.Context, sc views.Scope, id uuid.UUID) (*views.Product, error) {
	return admitted(ctx, s.db, func() (*views.Product, error) { return views.GetProduct(ctx, s.db, sc, id) })
}

// Ready pings the database and compares its schema version with this binary's migrations.
func (s *dbStore) Ready(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return problem.Fail(ErrNotReady, "database unavailable")
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return &notReady{detail: "database unreachable", cause: err}
	}
	pending, err := migrations.Pending(ctx, sqlDB)
	if err != nil {
		return &notReady{detail: "cannot read the schema version", cause: err}
	}
	if pending {
		return problem.Fail(ErrNotReady, "database schema is older than this binary: run `wds migrate up`")
	}
	return nil
}

func (s *dbStore) AuthenticateRead(ctx context.Context, token string, now time.Time) (*models.ReadKey, error) {
	return apikeys.AuthenticateRead(ctx, s.db, token, now)
}

func (s *dbStore) UserByToken(ctx context.Context, token string) (*models.User, error) {
	return workspace.UserByToken(ctx, s.db, token)
}

func (s *dbStore) RequireRole(ctx context.Context, orgID, actorID uuid.UUID, roles ...models.Role) error {
	return workspace.RequireRole(ctx, s.db, orgID, actorID, roles...)
}

func (s *dbStore) OnlyOrg(ctx context.Context, actorID uuid.UUID) (uuid.UUID, error) {
	return workspace.OnlyOrg(ctx, s.db, actorID)
}

func (s *dbStore) RotateToken(ctx context.Context, userID, actorID uuid.UUID) (*workspace.RotatedToken, error) {
	return workspace.RotateToken(ctx, s.db, userID, actorID)
}

func (s *dbStore) RevokeToken(ctx context.Context, userID, actorID uuid.UUID) (*workspace.RevokedToken, error) {
	return workspace.RevokeToken(ctx, s.db, userID, actorID)
}
