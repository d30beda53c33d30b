package order_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/api/openapi"
	"wds/internal/apikeys"
	"wds/internal/events"
	"wds/internal/events/eventstest"
	"wds/internal/ingest"
	"wds/internal/order"
	"wds/internal/platform/paging"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

// The order's shape is defined once, by the view structs' tags; the schemas the service serves (the
// event-type catalog's JSON Schemas and the Read API's OpenAPI document) describe it to clients.
// These tests hold the three together: the same keys, and real orders that validate.

// jsonKeys are the json keys of t's fields, in order.
func jsonKeys(t reflect.Type) []string {
	var keys []string
	for f := range t.Fields() {
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		keys = append(keys, key)
	}
	return keys
}

// objectSchema is the part of a JSON Schema or OpenAPI schema object the key check reads.
type objectSchema struct {
	Required   []string                   `json:"required"`
	Properties map[string]json.RawMessage `json:"properties"`
}

// sameKeys fails unless s's properties and required list are exactly keys.
func sameKeys(t *testing.T, what string, s objectSchema, keys []string) {
	t.Helper()
	props := slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	})
	want := slices.Sorted(slices.Values(keys))
	if !slices.Equal(props, want) || !slices.Equal(slices.Sorted(slices.Values(s.Required)), want) {
		t.Errorf("%s: schema properties %v, required %v; the struct has %v", what, props, s.Required, want)
	}
}

// servedDefs are the $defs of the order.created body schema GET /v1/event-types serves.
func servedDefs(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	for _, k := range events.Catalog() {
		if k.Type == events.OrderCreated {
			var body struct {
				Defs map[string]json.RawMessage `json:"$defs"`
			}
			if err := json.Unmarshal(k.Schema(), &body); err != nil {
				t.Fatal(err)
			}
			return body.Defs
		}
	}
	t.Fatal("no order.created in the catalog")
	return nil
}

// readSchemas are the component schemas of the Read API's OpenAPI document.
func readSchemas(t *testing.T) openapi3.Schemas {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openapi.ReadYAML())
	if err != nil {
		t.Fatal(err)
	}
	return doc.Components.Schemas
}

func decode[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestViewStructsHaveTheServedSchemasKeys(t *testing.T) {
	defs := servedDefs(t)
	orderDef := decode[objectSchema](t, defs["order"])
	structs := map[string]reflect.Type{"order": reflect.TypeFor[order.Order](), "line": reflect.TypeFor[order.Line](),
		"payment": reflect.TypeFor[order.Payment](), "shipment": reflect.TypeFor[order.Shipment]()}
	for def, typ := range structs {
		sameKeys(t, "event schema "+def, decode[objectSchema](t, defs[def]), jsonKeys(typ))
	}
	sameKeys(t, "event schema order.source", decode[objectSchema](t, orderDef.Properties["source"]), jsonKeys(reflect.TypeFor[order.Source]()))

	read := readSchemas(t)
	asObject := func(s *openapi3.Schema) objectSchema {
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return decode[objectSchema](t, raw)
	}
	o := read["Order"].Value
	for name, c := range map[string]struct {
		s   *openapi3.Schema
		typ reflect.Type
	}{
		"Order": {o, structs["order"]}, "Order.lines": {o.Properties["lines"].Value.Items.Value, structs["line"]},
		"Order.source": {o.Properties["source"].Value, reflect.TypeFor[order.Source]()},
		"Payment":      {read["Payment"].Value, structs["payment"]}, "Shipment": {read["Shipment"].Value, structs["shipment"]},
	} {
		sameKeys(t, "read.yaml "+name, asObject(c.s), jsonKeys(c.typ))
	}
}

// richOrder creates, through the Integration API's operation, an order with every optional part
// present (client, external ids, metadata, an inline payment) and adds a refunded payment and two
// shipments, one delivered; it returns the order's id and its org.
func richOrder(t *testing.T, db *gorm.DB) (uuid.UUID, uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	org, _ := workspace.NewService(db).CreateOrg(ctx, "Acme")
	store, _ := workspace.NewService(db).CreateStore(ctx, org.ID, "Shop", "USD")
	owner, _, _ := workspace.NewService(db).CreateUser(ctx, org.ID, uuid.NewString()+"@example.com", models.RoleOwner)
	box, _ := secrets.NewBox(secrets.GenerateKey())
	k, err := apikeys.NewService(db, box).CreateIntegrationKey(ctx, apikeys.NewIntegrationKey{OrgID: org.ID, StoreID: store.ID,
		ActorID: owner.ID, Scopes: models.IntegrationScopes, Label: "Shop <&>"})
	if err != nil {
		t.Fatal(err)
	}
	email := "ann@example.com"
	res, err := ingest.NewService(db, nil).CreateOrder(ctx, k.Key, ingest.Order{ExternalID: "INV/7 <&>",
		Client:   &ingest.Client{ExternalID: "c-1", Email: &email},
		Lines:    []ingest.Line{{Description: "Fish & Chips <b>\u2028", Quantity: 2, UnitPriceCents: 1500, Metadata: ingest.Metadata{"sku": "M"}}, {Quantity: 1, UnitPriceCents: 5}},
		Metadata: ingest.Metadata{"note": "<x> & \u2029"}, ShippingCents: 100, TaxCents: 7,
		Payment: &ingest.Payment{ExternalID: "p-1", AmountCents: 1000, Method: "card", Provider: "stripe", ProviderPaymentID: "pi_1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO payments (id, order_id, amount_cents, method, paid_at, refunded_at)
		 VALUES (gen_random_uuid(), @id, 5, 'cash', now() - interval '1 day', now())`,
		`INSERT INTO shipments (id, org_id, order_id, carrier, tracking_number, status, shipped_at, delivered_at)
		 VALUES (gen_random_uuid(), @org, @id, 'UPS', '1Z', 'delivered', now() - interval '1 hour', now()),
		        (gen_random_uuid(), @org, @id, 'DHL', NULL, 'shipped', now(), NULL)`,
		`UPDATE orders SET fulfillment_status = 'shipped' WHERE id = @id`,
	} {
		if err := db.Exec(q, map[string]any{"id": res.ID, "org": org.ID}).Error; err != nil {
			t.Fatal(err)
		}
	}
	return res.ID, org.ID
}

// TestOrdersValidateAgainstTheServedSchemas: a real order, as a get and in a list page, validates
// against the order.created body schema and the Read API's Order; the arrays PostgreSQL builds are
// exactly what encoding/json writes from their element structs.
func TestOrdersValidateAgainstTheServedSchemas(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	id, org := richOrder(t, db)
	got, err := order.Get(ctx, db, paging.Scope{OrgID: org}, id)
	if err != nil {
		t.Fatal(err)
	}
	page, err := order.List(ctx, db, paging.ListQuery{Scope: paging.Scope{OrgID: org}, Limit: 10})
	if err != nil || len(page.Rows) != 1 {
		t.Fatalf("list: %v %v", page.Rows, err)
	}
	listed := decode[struct{ Rows []json.RawMessage }](t, order.AppendPage(nil, page)).Rows[0]
	marshaled, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(marshaled, compact(t, listed)) {
		t.Errorf("a get and a list page show the order differently:\n%s\n%s", marshaled, listed)
	}

	catalog, err := eventstest.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	body := `{"id":"` + uuid.NewString() + `","type":"order.created","created_at":"2026-11-25T07:00:00Z","org_id":"` +
		org.String() + `","store_id":null,"data":` + string(marshaled) + `}`
	if err := catalog.Validate([]byte(body)); err != nil {
		t.Errorf("%v\n%s", err, marshaled)
	}
	if err := readSchemas(t)["Order"].Value.VisitJSON(decode[any](t, marshaled)); err != nil {
		t.Errorf("read.yaml Order: %v\n%s", err, marshaled)
	}

	lines := decode[[]order.Line](t, got.Lines)
	payments, err := got.PaymentList()
	if err != nil {
		t.Fatal(err)
	}
	shipments, err := got.ShipmentList()
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || len(payments) != 2 || !payments[1].Refunded || len(shipments) != 2 || shipments[0].DeliveredAt == nil {
		t.Fatalf("the order lacks a part the test needs: %s", marshaled)
	}
	for name, c := range map[string]struct {
		raw     json.RawMessage
		decoded any
	}{"lines": {got.Lines, lines}, "payments": {got.Payments, payments}, "shipments": {got.Shipments, shipments}} {
		want, err := json.Marshal(c.decoded)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(compact(t, c.raw), want) {
			t.Errorf("%s built by PostgreSQL differ from encoding/json of their structs:\n got %s\nwant %s", name, c.raw, want)
		}
	}
}

// compact is raw as encoding/json writes a json.RawMessage: compacted, with <, >, & and U+2028/9 escaped.
func compact(t *testing.T, raw []byte) []byte {
	t.Helper()
	out, err := json.Marshal(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
