package api_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"wds/api"
	"wds/api/openapi/openapitest"
	"wds/internal/catalog"
	"wds/internal/fulfillment"
	"wds/internal/ingest"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
	"wds/test/pgtest"
)

// FuzzWorkspaceOperations sends arbitrary bodies to every workspace operation (orders by hand,
// shipments, vendors and their claims, clients) on the real router and database: bad input is a 4xx,
// never a 500.
func FuzzWorkspaceOperations(f *testing.F) {
	for _, s := range []string{`{}`, `{"store_id":"STORE","name":"Clay","email":"a@b.c","notes":"x\ny"}`,
		`{"store_id":"STORE","lines":[{"quantity":1,"unit_price_cents":5}],"payment":{"amount_cents":5}}`,
		`{"carrier":"UPS","tracking_number":"1Z","shipped_at":"2026-01-01T00:00:00Z"}`, `{"delivered_at":"9999-12-31T23:59:59Z"}`,
		`{"tracking_number":"\u0000"}`, `{"token":"vct_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","email":"a@b.c"}`,
		`{"name":null,"phone":[1]}`, `{"tags":["a",1],"billing_address":{"city":5}}`, `{"quantity":1e99}`, `[]`, `nul`, ``} {
		f.Add(s)
	}
	db := pgtest.New(f)
	ctx := context.Background()
	org, store, _ := mustOrg(f, db, "Fuzzed")
	owner, token, err := workspace.NewService(db).CreateUser(ctx, org.ID, "fuzz@fuzzed.test", models.RoleOwner)
	if err != nil {
		f.Fatal(err)
	}
	storeID := store.ID.String()
	order, err := ingest.NewService(db, nil).CreateAppOrder(ctx, org.ID, owner.ID, ingest.AppOrder{StoreID: &storeID,
		Order: ingest.Order{Lines: []ingest.Line{{Quantity: 1, UnitPriceCents: 5}}}})
	if err != nil {
		f.Fatal(err)
	}
	shipment, err := fulfillment.NewService(db, nil).ShipOrder(ctx, owner.ID, order.ID, fulfillment.Ship{Carrier: "UPS"})
	if err != nil {
		f.Fatal(err)
	}
	vendor, err := catalog.NewService(db, nil).CreateVendor(ctx, org.ID, owner.ID, store.ID, catalog.VendorFields{Name: models.Optional[string]{Set: true, Value: "V"}})
	if err != nil {
		f.Fatal(err)
	}
	var client struct{ ID string }
	db.Raw(`SELECT id::text AS id FROM clients LIMIT 1`).Find(&client)
	log := logrus.New()
	log.SetOutput(io.Discard)
	box, _ := secrets.NewBox(secrets.GenerateKey())
	r, err := api.NewRouter(api.Deps{Services: apitest.Services(db, box, nil), Log: log})
	if err != nil {
		f.Fatal(err)
	}
	routes := []struct{ method, path string }{
		{"POST", "/admin/v1/orgs/" + org.ID.String() + "/orders"},
		{"POST", "/admin/v1/orgs/" + org.ID.String() + "/clients"},
		{"POST", "/admin/v1/orgs/" + org.ID.String() + "/vendors"},
		{"PATCH", "/admin/v1/vendors/" + vendor.ID.String()},
		{"POST", "/admin/v1/vendors/" + vendor.ID.String() + "/claim-token"},
		{"POST", "/admin/v1/orders/" + order.ID.String() + "/shipments"},
		{"POST", "/admin/v1/shipments/" + shipment.ID.String() + "/tracking"},
		{"POST", "/admin/v1/shipments/" + shipment.ID.String() + "/delivered"},
		{"POST", "/v1/vendor-claims"},
	}
	if client.ID != "" {
		routes = append(routes, struct{ method, path string }{"PATCH", "/admin/v1/clients/" + client.ID})
	}
	f.Fuzz(func(t *testing.T, input string) {
		body := strings.ReplaceAll(input, "STORE", storeID)
		for _, rt := range routes {
			req := httptest.NewRequest(rt.method, rt.path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			rec := openapitest.Serve(t, r, req)
			if rec.Code >= 500 {
				t.Fatalf("%s %s with %q: %d %s", rt.method, rt.path, input, rec.Code, rec.Body)
			}
		}
	})
}
