package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/ingest"
	"wds/models"
)

// demoFile keeps the demo workspace's ids and secrets so later starts print the same ones. It is a
// laptop convenience: production never stores a plaintext key.
const demoFile = "demo.json"

type demoData struct {
	OrgID         string `json:"org_id"`
	StoreID       string `json:"store_id"`
	OwnerID       string `json:"owner_id"`
	OperatorToken string `json:"operator_token"`
	ReadKey       string `json:"read_key"`
}

// ensureDemo creates a demo org, store, owner, read_write key, vendors, clients with orders and a
// published product on the first start and reads them back on later ones.
func ensureDemo(ctx context.Context, svc *services, dir string) (*demoData, error) {
	file := filepath.Join(dir, demoFile)
	if b, err := os.ReadFile(file); err == nil {
		var d demoData
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return &d, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	d, err := createDemo(ctx, svc)
	if err != nil {
		return nil, fmt.Errorf("create demo workspace: %w", err)
	}
	b, _ := json.MarshalIndent(d, "", "  ")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return nil, fmt.Errorf("record demo workspace: %w", err)
	}
	return d, nil
}

// createDemo writes the demo workspace through the services; a new org has no endpoint, so its
// events need no workflow.
func createDemo(ctx context.Context, svc *services) (*demoData, error) {
	people, keys, cat := svc.people, svc.keys, svc.catalog
	org, err := people.CreateOrg(ctx, "Demo Workspace")
	if err != nil {
		return nil, err
	}
	store, err := people.CreateStore(ctx, org.ID, "Demo Store", "USD")
	if err != nil {
		return nil, err
	}
	owner, token, err := people.CreateUser(ctx, org.ID, "owner+"+org.ID.String()[:8]+"@demo.example", models.RoleOwner)
	if err != nil {
		return nil, err
	}
	_, key, err := keys.CreateReadKey(ctx, apikeys.NewReadKey{OrgID: org.ID, ActorID: owner.ID, Scope: models.ScopeReadWrite, Name: "demo"})
	if err != nil {
		return nil, err
	}
	if err := createDemoRows(ctx, svc, org.ID, store.ID, owner.ID); err != nil {
		return nil, err
	}
	seller, err := cat.CreateSeller(ctx, "Demo Seller")
	if err != nil {
		return nil, err
	}
	if _, err := cat.LinkSeller(ctx, org.ID, store.ID, seller.ID); err != nil {
		return nil, err
	}
	if _, err := cat.CreateProduct(ctx, catalog.NewProduct{SellerID: seller.ID, Name: "Demo Mug", PriceCents: 1250, SKU: "MUG-1", Published: true}); err != nil {
		return nil, err
	}
	return &demoData{OrgID: org.ID.String(), StoreID: store.ID.String(), OwnerID: owner.ID.String(), OperatorToken: token, ReadKey: key}, nil
}

// demoRows is how many vendors, and orders each with its own client, the demo workspace holds:
// enough for a few pages at the README's limit=5, so paging can be tried on a fresh start.
const demoRows = 12

// createDemoRows makes the vendors and the paid orders (with their clients) of the demo store.
func createDemoRows(ctx context.Context, svc *services, org, store, owner uuid.UUID) error {
	cat, orders := svc.catalog, svc.orders
	for i := range demoRows {
		name, email := fmt.Sprintf("Supplier %02d", i+1), fmt.Sprintf("orders@supplier%02d.example", i+1)
		if i == 0 {
			name, email = "Acme Supplies", "orders@acme.example"
		}
		if _, err := cat.CreateVendor(ctx, org, owner, store, catalog.VendorFields{
			Name:  models.Optional[string]{Set: true, Value: name},
			Email: models.Optional[string]{Set: true, Value: email}}); err != nil {
			return err
		}
		if _, err := orders.CreateAppOrder(ctx, org, owner, demoOrder(store, i)); err != nil {
			return err
		}
	}
	return nil
}

// demoOrder is the i-th demo order: a few mugs for the i-th client, paid by card.
func demoOrder(store uuid.UUID, i int) ingest.AppOrder {
	s, email := store.String(), fmt.Sprintf("client%02d@demo.example", i+1)
	qty := int64(i%3 + 1)
	return ingest.AppOrder{StoreID: &s, Order: ingest.Order{
		ExternalID: fmt.Sprintf("demo-%02d", i+1),
		Client:     &ingest.Client{Email: &email},
		Lines:      []ingest.Line{{Description: "Demo Mug", Quantity: qty, UnitPriceCents: 1250}},
		Payment:    &ingest.Payment{AmountCents: qty * 1250, Method: "card"},
	}}
}
