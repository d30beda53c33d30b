package bench

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"

	"wds/internal/apikeys"
	"wds/internal/workspace"
	"wds/models"
)

// tenant is an org with one store and an owner who may mint keys; token is the owner's operator
// token, for the Operator API.
type tenant struct {
	orgID, storeID, ownerID uuid.UUID
	token                   string
}

// newTenant creates an org, its store and an owner through the same operations `wds admin` uses.
func newTenant(ctx context.Context, db *gorm.DB, name string) (*tenant, error) {
	org, err := workspace.NewService(db).CreateOrg(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	store, err := workspace.NewService(db).CreateStore(ctx, org.ID, name+" store", "USD")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	owner, token, err := workspace.NewService(db).CreateUser(ctx, org.ID, "owner@"+org.ID.String()+".example.com", models.RoleOwner)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return &tenant{orgID: org.ID, storeID: store.ID, ownerID: owner.ID, token: token}, nil
}

// keyPool hands out keys so that no key goes over its per-minute budget: the API limits each key per
// minute, and the benchmark measures the instance's capacity, not one key's allowance (as if many
// integrators called at once). Each key serves at most perKey requests in the whole run. Keys are
// taken in turn, so requests in flight together carry different keys, as many integrators' would:
// one key shared by every client would measure that key's rate-limit row, which its callers update
// one at a time.
type keyPool struct {
	keys   []string
	perKey int64
	next   atomic.Int64
}

// readKeyBudget stays under the Read API's 600 requests per key per minute.
const readKeyBudget = 500

// get returns the key for the next request, or an error when the pool is spent.
func (p *keyPool) get() (string, error) {
	n := p.next.Add(1) - 1
	if n >= p.perKey*int64(len(p.keys)) {
		return "", fmt.Errorf("bench: key pool spent after %d requests; mint more keys", n)
	}
	return p.keys[n%int64(len(p.keys))], nil
}

// mintReadKeys mints n read keys for the tenant, four at a time.
func mintReadKeys(ctx context.Context, db *gorm.DB, t *tenant, n int) (*keyPool, error) {
	keys := make([]string, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i := range keys {
		g.Go(func() error {
			_, plain, err := apikeys.NewService(db, nil).CreateReadKey(gctx, apikeys.NewReadKey{OrgID: t.orgID, ActorID: t.ownerID,
				Name: fmt.Sprintf("bench %d", i)})
			keys[i] = plain
			if err != nil {
				return fmt.Errorf("bench: mint read key: %w", err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return &keyPool{keys: keys, perKey: readKeyBudget}, nil
}
