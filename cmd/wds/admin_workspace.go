package main

import (
	"context"
	"flag"
	"time"

	"github.com/google/uuid"

	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

type runFunc = func(ctx context.Context, env *adminEnv) (any, error)

func init() {
	registerAdmin("org create", "create an org (a workspace)", orgCreate)
	registerAdmin("store create", "add a store to an org", storeCreate)
	registerAdmin("user create", "add a user to an org with a role; prints their operator token", userCreate)
	registerAdmin("user list", "list an org's users and roles", userList)
	registerAdmin("user rotate-token", "replace a user's operator token", userRotateToken)
	registerAdmin("user revoke-token", "revoke a user's operator token", userRevokeToken)
	registerAdmin("read-key create", "mint a pck_live_ key for the Read API; prints it once", readKeyCreate)
	registerAdmin("read-key revoke", "revoke a read key", readKeyRevoke)
	registerAdmin("seller create", "add a seller (a product catalog)", sellerCreate)
	registerAdmin("seller link", "link a seller to a store, so its products show in the org's Read API", sellerLink)
	registerAdmin("product create", "add a product to a seller's catalog", productCreate)
}

// workspaceOps is what the org, store and user commands call (workspace.Service).
type workspaceOps interface {
	CreateOrg(ctx context.Context, name string) (*models.Org, error)
	CreateStore(ctx context.Context, orgID uuid.UUID, name, currency string) (*models.Store, error)
	CreateUser(ctx context.Context, orgID uuid.UUID, email string, role models.Role) (*models.User, string, error)
	ListMembers(ctx context.Context, orgID uuid.UUID) ([]workspace.Member, error)
	ReissueToken(ctx context.Context, userID, actorID uuid.UUID) (*workspace.RotatedToken, error)
	RevokeToken(ctx context.Context, userID, actorID uuid.UUID) (*workspace.RevokedToken, error)
}

// readKeyOps is what the read-key commands call (apikeys.Service).
type readKeyOps interface {
	CreateReadKey(ctx context.Context, in apikeys.NewReadKey) (*models.ReadKey, string, error)
	RevokeReadKey(ctx context.Context, id, actorID uuid.UUID) (*models.ReadKey, error)
}

// catalogOps is what the seller, product and vendor commands call (catalog.Service).
type catalogOps interface {
	CreateSeller(ctx context.Context, name string) (*models.Seller, error)
	LinkSeller(ctx context.Context, orgID, storeID, sellerID uuid.UUID) (*models.SellerLink, error)
	CreateProduct(ctx context.Context, in catalog.NewProduct) (*models.Product, error)
	CreateVendor(ctx context.Context, orgID, actorID, storeID uuid.UUID, in catalog.VendorFields) (*catalog.Vendor, error)
	UpdateVendor(ctx context.Context, actorID, vendorID uuid.UUID, in catalog.VendorFields) (*catalog.Vendor, error)
	IssueClaimToken(ctx context.Context, actorID, vendorID uuid.UUID) (*catalog.ClaimToken, error)
}

type idOut struct {
	ID string `json:"id"`
}

func orgCreate(fs *flag.FlagSet) runFunc {
	name := stringFlag(fs, "name", "org name")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		org, err := env.workspace.CreateOrg(ctx, *name)
		if err != nil {
			return nil, err
		}
		return idOut{org.ID.String()}, nil
	}
}

func storeCreate(fs *flag.FlagSet) runFunc {
	org, name, currency := uuidFlag(fs, "org", "org id"), stringFlag(fs, "name", "store name"), fs.String("currency", "USD", "ISO currency")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		s, err := env.workspace.CreateStore(ctx, *org, *name, *currency)
		if err != nil {
			return nil, err
		}
		return idOut{s.ID.String()}, nil
	}
}

func userCreate(fs *flag.FlagSet) runFunc {
	org, email, role := uuidFlag(fs, "org", "org id"), stringFlag(fs, "email", "email"), stringFlag(fs, "role", "owner|admin|member")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		u, token, err := env.workspace.CreateUser(ctx, *org, *email, models.Role(*role))
		if err != nil {
			return nil, err
		}
		return map[string]string{"id": u.ID.String(), "token": token}, nil
	}
}

func userList(fs *flag.FlagSet) runFunc {
	org := uuidFlag(fs, "org", "org id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		rows, err := env.workspace.ListMembers(ctx, *org)
		if err != nil {
			return nil, err
		}
		return map[string]any{"rows": rows}, nil
	}
}

// userRotateToken prints the user's new operator token; the old one stops working at once.
func userRotateToken(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "user whose token to replace"), uuidFlag(fs, "actor", "acting user id (the user themselves, or an owner or admin of their org)")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		out, err := env.workspace.ReissueToken(ctx, *id, *actor)
		if err != nil {
			return nil, err
		}
		return map[string]string{"id": out.ID.String(), "token": out.Token}, nil
	}
}

// userRevokeToken stops the user's operator token from authenticating until it is rotated.
func userRevokeToken(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "user whose token to revoke"), uuidFlag(fs, "actor", "acting user id (the user themselves, or an owner or admin of their org)")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		out, err := env.workspace.RevokeToken(ctx, *id, *actor)
		if err != nil {
			return nil, err
		}
		return map[string]string{"id": out.ID.String(), "revoked_at": out.RevokedAt.UTC().Format(time.RFC3339Nano)}, nil
	}
}

func readKeyCreate(fs *flag.FlagSet) runFunc {
	org, actor := uuidFlag(fs, "org", "org id"), uuidFlag(fs, "actor", "acting user id")
	scope, name, expires := fs.String("scope", models.ScopeReadOnly, "read_only|read_write"), fs.String("name", "", "label"), fs.String("expires-at", "", "RFC 3339")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		exp, err := optionalTime("expires-at", *expires)
		if err != nil {
			return nil, err
		}
		k, plain, err := env.readKeys.CreateReadKey(ctx, apikeys.NewReadKey{OrgID: *org, ActorID: *actor, Scope: *scope, Name: *name, ExpiresAt: exp})
		if err != nil {
			return nil, err
		}
		return map[string]string{"id": k.ID.String(), "key": plain}, nil
	}
}

func readKeyRevoke(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "key id"), uuidFlag(fs, "actor", "acting user id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		k, err := env.readKeys.RevokeReadKey(ctx, *id, *actor)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": k.ID.String(), "revoked_at": k.RevokedAt.UTC().Format(time.RFC3339Nano)}, nil
	}
}

func sellerCreate(fs *flag.FlagSet) runFunc {
	name := fs.String("name", "", "seller name")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		s, err := env.catalog.CreateSeller(ctx, *name)
		if err != nil {
			return nil, err
		}
		return idOut{s.ID.String()}, nil
	}
}

func sellerLink(fs *flag.FlagSet) runFunc {
	org, store, seller := uuidFlag(fs, "org", "org id"), uuidFlag(fs, "store", "store id"), uuidFlag(fs, "seller", "seller id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		l, err := env.catalog.LinkSeller(ctx, *org, *store, *seller)
		if err != nil {
			return nil, err
		}
		return map[string]string{"org_id": l.OrgID.String(), "store_id": l.StoreID.String(), "seller_id": l.SellerID.String()}, nil
	}
}

func productCreate(fs *flag.FlagSet) runFunc {
	seller, name, sku := uuidFlag(fs, "seller", "seller id"), fs.String("name", "", "product name"), fs.String("sku", "", "SKU")
	price, published := fs.Int64("price-cents", -1, "price in minor units"), fs.Bool("published", false, "visible in the shop")
	currency := fs.String("currency", "USD", "ISO currency")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		if *price < 0 {
			return nil, problem.Fail(paging.ErrInvalidParameter, "--price-cents is required and must be >= 0")
		}
		p, err := env.catalog.CreateProduct(ctx, catalog.NewProduct{SellerID: *seller, Name: *name, PriceCents: *price, SKU: *sku, Currency: *currency, Published: *published})
		if err != nil {
			return nil, err
		}
		return idOut{p.ID.String()}, nil
	}
}
