package activities_test

import (
	"bytes"
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
// values sealed, never in the clear in the row: the endpoint's own sealed set, not sealed again.
// They are shown under the names the wire carried. Only what the HTTP client adds itself is left out.
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
	custom, err := models.OpenHeaders(f.Box, sent.Custom, sent.Sealed)
	if err != nil || len(custom) != 2 {
		t.Fatalf("the sealed custom headers open to %v (%v)", custom, err)
	}
	shown := sent.Shown(custom)
	for name, value := range shown {
		if got.Get(name) != value {
			t.Errorf("recorded %s: %q, the receiver got %q", name, value, got.Get(name))
		}
	}
	for name := range got {
		if _, ok := shown[name]; !ok && name != "Content-Length" && name != "Accept-Encoding" {
			t.Errorf("the receiver got %s: %q, which the attempt did not record", name, got.Get(name))
		}
	}
	var endpointSealed []byte
	f.DB.Raw(`SELECT headers_sealed FROM webhook_endpoints WHERE id = ?`, ep.ID).Row().Scan(&endpointSealed)
	if !bytes.Equal(sent.Sealed, endpointSealed) {
		t.Errorf("the attempt sealed its custom headers again instead of recording the endpoint's sealed set")
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
	if shown["Authorization"] != "Bearer SUPERSECRET" || shown["X-Tenant"] != "acme-tenant" {
		t.Fatalf("the custom headers are shown as %v", shown)
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
