package main

import (
	"context"
	"flag"
	"time"

	"wds/apikeys"
	"wds/catalog"
	"wds/models"
	"wds/workspace"
)

type runFunc = func(ctx context.Context, env *adminEnv) (any, error)

func init() {
	registerAdmin("org create", orgCreate)
	registerAdmin("store create", storeCreate)
	registerAdmin("user create", userCreate)
	registerAdmin("read-key create", readKeyCreate)
	registerAdmin("read-key revoke", readKeyRevoke)
	registerAdmin("vendor create", vendorCreate)
	registerAdmin("seller create", sellerCreate)
	registerAdmin("seller link", sellerLink)
	registerAdmin("product create", productCreate)
}

type idOut struct {
	ID string `json:"id"`
}

func orgCreate(fs *flag.FlagSet) runFunc {
	name := fs.String("name", "", "org name")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		if err := requireString("name", *name); err != nil {
			return nil, err
		}
		org, err := workspace.CreateOrg(ctx, env.db, *name)
		if err != nil {
			return nil, err
		}
		return idOut{org.ID.String()}, nil
	}
}

func storeCreate(fs *flag.FlagSet) runFunc {
	org, name, currency := fs.String("org", "", "org id"), fs.String("name", "", "store name"), fs.String("currency", "USD", "ISO currency")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		orgID, err := requireUUID("org", *org)
		if err != nil {
			return nil, err
		}
		s, err := workspace.CreateStore(ctx, env.db, orgID, *name, *currency)
		if err != nil {
			return nil, err
		}
		return idOut{s.ID.String()}, nil
	}
}

func userCreate(fs *flag.FlagSet) runFunc {
	org, email, role := fs.String("org", "", "org id"), fs.String("email", "", "email"), fs.String("role", "", "owner|admin|member")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		orgID, err := requireUUID("org", *org)
		if err != nil {
			return nil, err
		}
		u, token, err := workspace.CreateUser(ctx, env.db, orgID, *email, models.Role(*role))
		if err != nil {
			return nil, err
		}
		return map[string]string{"id": u.ID.String(), "token": token}, nil
	}
}

func readKeyCreate(fs *flag.FlagSet) runFunc {
	org, actor := fs.String("org", "", "org id"), fs.String("actor", "", "acting user id")
	scope, name, expires := fs.String("scope", models.ScopeReadOnly, "read_only|read_write"), fs.String("name", "", "label"), fs.String("expires-at", "", "RFC 3339")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		orgID, err := requireUUID("org", *org)
		if err != nil {
			return nil, err
		}
		actorID, err := requireUUID("actor", *actor)
		if err != nil {
			return nil, err
		}
		exp, err := optionalTime("expires-at", *expires)
		if err != nil {
			return nil, err
		}
		k, plain, err := apikeys.CreateReadKey(ctx, env.db, apikeys.NewReadKey{OrgID: orgID, ActorID: actorID, Scope: *scope, Name: *name, ExpiresAt: exp})
		if err != nil {
			return nil, err
		}
		return map[string]string{"id": k.ID.String(), "key": plain}, nil
	}
}

func readKeyRevoke(fs *flag.FlagSet) runFunc {
	id, actor := fs.String("id", "", "key id"), fs.String("actor", "", "acting user id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		keyID, err := requireUUID("id", *id)
		if err != nil {
			return nil, err
		}
		actorID, err := requireUUID("actor", *actor)
		if err != nil {
			return nil, err
		}
		k, err := apikeys.RevokeReadKey(ctx, env.db, keyID, actorID)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": k.ID.String(), "revoked_at": k.RevokedAt.UTC().Format(time.RFC3339Nano)}, nil
	}
}

func vendorCreate(fs *flag.FlagSet) runFunc {
	org, store, name, email := fs.String("org", "", "org id"), fs.String("store", "", "store id"), fs.String("name", "", "vendor name"), fs.String("email", "", "email")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		orgID, err := requireUUID("org", *org)
		if err != nil {
			return nil, err
		}
		storeID, err := requireUUID("store", *store)
		if err != nil {
			return nil, err
		}
		v, err := catalog.CreateVendor(ctx, env.db, orgID, storeID, *name, *email)
		if err != nil {
			return nil, err
		}
		return idOut{v.ID.String()}, nil
	}
}

func sellerCreate(fs *flag.FlagSet) runFunc {
	name := fs.String("name", "", "seller name")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		s, err := catalog.CreateSeller(ctx, env.db, *name)
		if err != nil {
			return nil, err
		}
		return idOut{s.ID.String()}, nil
	}
}

func sellerLink(fs *flag.FlagSet) runFunc {
	org, store, seller := fs.String("org", "", "org id"), fs.String("store", "", "store id"), fs.String("seller", "", "seller id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		orgID, err := requireUUID("org", *org)
		if err != nil {
			return nil, err
		}
		storeID, err := requireUUID("store", *store)
		if err != nil {
			return nil, err
		}
		sellerID, err := requireUUID("seller", *seller)
		if err != nil {
			return nil, err
		}
		l, err := catalog.LinkSeller(ctx, env.db, orgID, storeID, sellerID)
		if err != nil {
			return nil, err
		}
		return map[string]string{"org_id": l.OrgID.String(), "store_id": l.StoreID.String(), "seller_id": l.SellerID.String()}, nil
	}
}

func productCreate(fs *flag.FlagSet) runFunc {
	seller, name, sku := fs.String("seller", "", "seller id"), fs.String("name", "", "product name"), fs.String("sku", "", "SKU")
	price, published := fs.Int64("price-cents", -1, "price in minor units"), fs.Bool("published", false, "visible in the shop")
	currency := fs.String("currency", "USD", "ISO currency")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		sellerID, err := requireUUID("seller", *seller)
		if err != nil {
			return nil, err
		}
		if *price < 0 {
			return nil, models.Fail(models.ErrInvalidParameter, "--price-cents is required and must be >= 0")
		}
		p, err := catalog.CreateProduct(ctx, env.db, catalog.NewProduct{SellerID: sellerID, Name: *name, PriceCents: *price, SKU: *sku, Currency: *currency, Published: *published})
		if err != nil {
			return nil, err
		}
		return idOut{p.ID.String()}, nil
	}
}
