package activities_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/models"
	"wds/test/deliverytest"
)

// An attempt records the headers its POST carried, as the receiver got them: wds's own with their
// values (the signature and timestamp are that attempt's), the custom ones by name with their
// values sealed, never in the clear in the row. Only what the HTTP client adds itself is left out.
func TestAnAttemptRecordsTheHeadersItSent(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: rc.Srv.URL + "/hook",
		EventTypes: []string{events.OrderCreated}, Headers: map[string]string{"authorization": "Bearer SUPERSECRET", "X-Tenant": "acme-tenant"}})
	if err != nil {
		t.Fatal(err)
	}
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	if res, err := f.Acts(rc, true).Deliver(f.Ctx, in); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("%+v %v", res, err)
	}
	rows := f.Rows(in.ChainID)
	if len(rows) != 1 || rows[0].Sent == nil {
		t.Fatalf("rows %+v", rows)
	}
	sent, got := rows[0].Sent, rc.Got()[0].Header
	for name, value := range sent.Standard {
		if got.Get(name) != value {
			t.Errorf("recorded %s: %q, the receiver got %q", name, value, got.Get(name))
		}
	}
	for name := range got {
		_, own := sent.Standard[name]
		_, custom := sent.Custom[name]
		if !own && !custom && name != "Content-Length" && name != "Accept-Encoding" {
			t.Errorf("the receiver got %s: %q, which the attempt did not record", name, got.Get(name))
		}
	}
	if sent.Standard["X-Pc-Delivery-Id"] != in.DeliveryID.String() || sent.Standard["Webhook-Signature"] == "" {
		t.Errorf("recorded %v", sent.Standard)
	}
	var row string
	if err := f.DB.Raw(`SELECT request_headers::text FROM webhook_deliveries WHERE id = ?`, in.DeliveryID).Row().Scan(&row); err != nil {
		t.Fatal(err)
	}
	for _, value := range []string{"Bearer SUPERSECRET", "acme-tenant"} {
		if strings.Contains(row, value) || strings.Contains(row, hex.EncodeToString([]byte(value))) {
			t.Fatalf("the delivery row holds the header value %q: %s", value, row)
		}
	}
	custom, err := models.OpenHeaders(f.Box, sent.Custom, sent.Sealed)
	if err != nil || custom["Authorization"] != "Bearer SUPERSECRET" || custom["X-Tenant"] != "acme-tenant" || len(custom) != 2 {
		t.Fatalf("the sealed custom headers open to %v (%v)", custom, err)
	}
}

// An attempt that sends nothing (its endpoint disabled) records no headers.
func TestAnAttemptThatSentNothingRecordsNoHeaders(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep := f.Endpoint(rc.Srv.URL + "/hook")
	if err := f.DB.Exec(`UPDATE webhook_endpoints SET enabled = false WHERE id = ?`, ep.ID).Error; err != nil {
		t.Fatal(err)
	}
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	if _, err := f.Acts(rc, true).Deliver(f.Ctx, in); err != nil {
		t.Fatal(err)
	}
	if rows := f.Rows(in.ChainID); len(rows) != 1 || rows[0].Sent != nil || len(rc.Got()) != 0 {
		t.Fatalf("rows %+v", rows)
	}
}
