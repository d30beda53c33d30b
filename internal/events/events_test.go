package events_test

import (
	"os"
	"strings"
	"testing"

	"wds/internal/events"
	"wds/internal/events/eventstest"
)

func validator(t *testing.T) *eventstest.Validator {
	t.Helper()
	v, err := eventstest.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCatalogHasFourteenTypesEachWithASchema(t *testing.T) {
	kinds := events.Catalog()
	if len(kinds) != 14 {
		t.Fatalf("%d types, want the 11 of the catalog plus order.cancelled, payment.refunded and webhook.endpoint_disabled", len(kinds))
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.Type] || !events.Known(k.Type) || k.Description == "" || len(k.Schema()) == 0 {
			t.Errorf("%+v: duplicate, unknown, undescribed or without schema", k)
		}
		seen[k.Type] = true
	}
	if events.Known("order.updated") {
		t.Error("order.updated is not in the catalog")
	}
}

const (
	uuid1 = "6f1c7c3e-8f0a-4d4b-9a57-0c5f8e2b9d11"
	uuid2 = "0b7e1f2a-3c4d-4e5f-8a9b-1c2d3e4f5a6b"
	at    = "2026-11-25T07:00:00.123456Z"
)

var (
	order = `{"id":"` + uuid1 + `","number":"1001","status":"paid","fulfillment_status":"shipped","store_id":"` + uuid2 + `",
		"client_id":null,"external_id":"ext-1","currency":"USD","subtotal_cents":3000,"shipping_cents":0,"tax_cents":0,
		"total_cents":3000,"amount_paid_cents":3000,
		"lines":[{"description":"Mug","quantity":2,"unit_price_cents":1500,"total_cents":3000,"metadata":{}}],
		"payments":[` + payment + `],"shipments":[` + shipment + `],"metadata":{},
		"source":{"kind":"integration","integration_key_id":"` + uuid2 + `","label":null},
		"created_at":"` + at + `","updated_at":"` + at + `","cancelled_at":null}`
	payment = `{"id":"` + uuid2 + `","order_id":"` + uuid1 + `","external_id":null,"amount_cents":3000,"method":"card",
		"provider":"","provider_payment_id":"","paid_at":"` + at + `","refunded":false,"refunded_at":null,"created_at":"` + at + `"}`
	shipment = `{"id":"` + uuid2 + `","order_id":"` + uuid1 + `","carrier":"UPS","tracking_number":"1Z999","status":"shipped",
		"shipped_at":"` + at + `","delivered_at":null}`
	client = `{"id":"` + uuid1 + `","store_id":"` + uuid2 + `","email":"ann@example.com","display_name":"Ann","first_name":"Ann",
		"last_name":"","phone":"","client_type":"retail","tags":[],"billing_address":null,"source":null,
		"created_at":"` + at + `","updated_at":"` + at + `"}`
	vendor = `{"id":"` + uuid1 + `","store_id":"` + uuid2 + `","name":"Supplier","email":null,"phone":null,"notes":null,
		"claimed_at":"` + at + `","claimed_by_email":"s@example.com","created_at":"` + at + `","updated_at":"` + at + `"}`
)

func body(typ, data string) string {
	return `{"id":"` + uuid1 + `","type":"` + typ + `","created_at":"` + at + `","org_id":"` + uuid2 + `","store_id":"` + uuid2 + `","data":` + data + `}`
}

func TestSchemasAcceptEachKindsBody(t *testing.T) {
	v := validator(t)
	bodies := map[string]string{
		events.OrderCreated:          body(events.OrderCreated, order),
		events.OrderCancelled:        body(events.OrderCancelled, order),
		events.OrderShipped:          body(events.OrderShipped, `{"order":`+order+`,"shipment":`+shipment+`}`),
		events.OrderDelivered:        body(events.OrderDelivered, `{"order":`+order+`,"shipment":`+shipment+`}`),
		events.ShipmentTrackingAdded: body(events.ShipmentTrackingAdded, `{"order":`+order+`,"shipment":`+shipment+`}`),
		events.PaymentRecorded:       body(events.PaymentRecorded, `{"payment":`+payment+`,"order":`+order+`}`),
		events.PaymentRefunded:       body(events.PaymentRefunded, `{"payment":`+payment+`,"order":`+order+`}`),
		events.ClientCreated:         body(events.ClientCreated, client),
		events.ClientUpdated:         body(events.ClientUpdated, client),
		events.VendorCreated:         body(events.VendorCreated, vendor),
		events.VendorUpdated:         body(events.VendorUpdated, vendor),
		events.VendorClaimed:         body(events.VendorClaimed, vendor),
		events.WebhookEndpointDisabled: body(events.WebhookEndpointDisabled, `{"id":"`+uuid1+`","org_id":"`+uuid2+`","url":"https://hooks.example.com/in",
			"event_types":["order.created"],"enabled":false,"max_attempts":5,"rate_limit":null,"headers":{"Authorization":""},
			"disabled_reason":"failing","health":{"last_success_at":null,"failing_since":"`+at+`","consecutive_dropped":12,
			"succeeded_24h":0,"failed_24h":60},"created_by":"`+uuid1+`","created_at":"`+at+`","updated_at":"`+at+`","reason":"failing"}`),
		events.WebhookTest: `{"id":null,"type":"webhook.test","created_at":"` + at + `","org_id":"` + uuid2 +
			`","store_id":null,"data":{"endpoint_id":"` + uuid1 + `","message":"hello"}}`,
	}
	if len(bodies) != len(events.Types()) {
		t.Fatalf("a sample for %d of %d types", len(bodies), len(events.Types()))
	}
	for typ, b := range bodies {
		if err := v.Validate([]byte(b)); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	summarized := `{"id":"` + uuid1 + `","type":"order.created","created_at":"` + at + `","org_id":"` + uuid2 +
		`","store_id":null,"summarized":true,"data":{"id":"` + uuid1 + `"},"detail":"over the cap"}`
	if err := v.Validate([]byte(summarized)); err != nil {
		t.Errorf("summarized body: %v", err)
	}
}

func TestSchemasRejectDrift(t *testing.T) {
	v := validator(t)
	bad := map[string]string{
		"a field the schema does not know": body(events.ClientCreated, strings.Replace(client, `"phone":""`, `"phone":"","nickname":"x"`, 1)),
		"a field missing":                  body(events.VendorCreated, strings.Replace(vendor, `"notes":null,`, ``, 1)),
		"a wrong type":                     body(events.OrderCreated, strings.Replace(order, `"total_cents":3000`, `"total_cents":"3000"`, 1)),
		"an unknown status":                body(events.OrderCreated, strings.Replace(order, `"fulfillment_status":"shipped"`, `"fulfillment_status":"lost"`, 1)),
		"a malformed uuid":                 body(events.ClientUpdated, strings.Replace(client, uuid1, "not-a-uuid", 1)),
		"a malformed time":                 body(events.VendorClaimed, strings.Replace(vendor, `"claimed_at":"`+at, `"claimed_at":"yesterday`, 1)),
		"data of another kind":             body(events.OrderShipped, order),
		"a summary without detail": `{"id":"` + uuid1 + `","type":"order.created","created_at":"` + at + `","org_id":"` + uuid2 +
			`","store_id":null,"summarized":true,"data":{"id":"` + uuid1 + `"}}`,
	}
	for what, b := range bad {
		if err := v.Validate([]byte(b)); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}

// docs/events.md lists every type in its catalog table and shows a sample body of each.
func TestDocsListEveryType(t *testing.T) {
	doc, err := os.ReadFile("../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range events.Types() {
		if !strings.Contains(string(doc), "| `"+typ+"` |") {
			t.Errorf("docs/events.md has no catalog row for %s", typ)
		}
		if !strings.Contains(string(doc), "### "+typ+"\n") {
			t.Errorf("docs/events.md has no sample body of %s", typ)
		}
	}
}
