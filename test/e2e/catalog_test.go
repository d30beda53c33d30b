package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/internal/dev/temporaldev"
	"wds/internal/events"
	"wds/internal/events/eventstest"
)

// servedSchemas compiles the schemas GET /v1/event-types serves, as a receiver would fetch them.
func (h *harness) servedSchemas() *eventstest.Validator {
	h.t.Helper()
	resp, err := openapitest.Client(h.t, nil).Get(h.api.URL + "/v1/event-types")
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Rows []struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"rows"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
		h.t.Fatalf("event-types: %d %v", resp.StatusCode, err)
	}
	schemas := map[string]json.RawMessage{}
	for _, r := range doc.Rows {
		schemas[r.Type] = r.Schema
	}
	v, err := eventstest.New(schemas)
	if err != nil {
		h.t.Fatal(err)
	}
	return v
}

// orgEvents counts the org's outbox rows, the test event's included.
func (h *harness) orgEvents() int64 {
	var n int64
	h.db.Raw("SELECT count(*) FROM events WHERE org_id = ?", h.org).Find(&n)
	return n
}

// must makes a request and fails the test unless it answers want.
func (h *harness) must(want int, method, path, token string, body any) map[string]any {
	h.t.Helper()
	status, out := h.request(method, path, token, body)
	if status != want {
		h.t.Fatalf("%s %s: %d %v, want %d", method, path, status, out, want)
	}
	return out
}

// Every one of the 14 event types fires from a real operation, arrives signed at an endpoint
// subscribed to all of them, and validates against the schema GET /v1/event-types serves; operations
// that change nothing emit nothing.
func TestEveryEventTypeFiresAndMatchesItsServedSchema(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.disableAfter = time.Nanosecond // the first dropped chain disables its endpoint
	h.startWorker()
	schemas := h.servedSchemas()
	rc := newReceiver(t, ok)
	ep := h.endpoint(rc, 5, events.Types()...)
	// A receiver that is down: its first dropped chain disables it, and ep hears of it.
	h.endpoint(newReceiver(t, func(int) int { return http.StatusServiceUnavailable }), 1, events.VendorCreated)
	ik, err := apikeys.NewService(h.db, h.box).CreateIntegrationKey(h.ctx, apikeys.NewIntegrationKey{OrgID: h.org, StoreID: h.store,
		ActorID: h.owner, Scopes: []string{"orders:write", "orders:cancel", "payments:write", "payments:refund", "clients:write"}})
	if err != nil {
		t.Fatal(err)
	}
	key, op := ik.Plaintext, h.ownerToken
	noop := func(what string, method, path, token string, body any, want int) {
		t.Helper()
		before := h.orgEvents()
		h.must(want, method, path, token, body)
		if after := h.orgEvents(); after != before {
			var newest []string
			h.db.Raw("SELECT type || ' ' || created_at::text FROM events WHERE org_id = ? ORDER BY created_at DESC LIMIT ?",
				h.org, after-before).Scan(&newest)
			t.Errorf("%s emitted %d events, want none: %v", what, after-before, newest)
		}
	}

	// Integration API: order.created, client.created, payment.recorded, then the rest of the order's life.
	orderBody := func(ext string, payCents int) map[string]any {
		b := map[string]any{"external_id": ext, "client": map[string]any{"external_id": "c-" + ext, "email": ext + "@example.com"},
			"lines": []map[string]any{{"description": "Mug", "quantity": 2, "unit_price_cents": 1500}}}
		if payCents > 0 {
			b["payment"] = map[string]any{"external_id": "pay-" + ext, "amount_cents": payCents, "method": "card"}
		}
		return b
	}
	shipped := h.must(http.StatusCreated, "POST", "/integrations/v1/orders", key, orderBody("cat-1", 1000))
	h.must(http.StatusCreated, "POST", "/integrations/v1/orders/"+shipped["id"].(string)+"/payments", key,
		map[string]any{"external_id": "pay-cat-1b", "amount_cents": 2000, "method": "card"})
	refunded := h.must(http.StatusCreated, "POST", "/integrations/v1/orders", key, orderBody("cat-2", 3000))
	h.must(http.StatusOK, "POST", "/integrations/v1/payments/"+refunded["payment_id"].(string)+"/refund", key, nil)
	cancelled := h.must(http.StatusCreated, "POST", "/integrations/v1/orders", key, orderBody("cat-3", 0))
	h.must(http.StatusOK, "POST", "/integrations/v1/orders/"+cancelled["id"].(string)+"/cancel", key, nil)
	h.must(http.StatusOK, "POST", "/integrations/v1/clients", key, map[string]any{"external_id": "c-cat-1", "phone": "+1 555 0100"})
	noop("a repeated order", "POST", "/integrations/v1/orders", key, orderBody("cat-1", 1000), http.StatusOK)

	// Shipments: order.shipped, shipment.tracking_added, order.delivered; repeats are no-ops.
	shipment := h.must(http.StatusCreated, "POST", "/admin/v1/orders/"+shipped["id"].(string)+"/shipments", op, map[string]any{"carrier": "UPS"})
	sid := shipment["id"].(string)
	h.must(http.StatusOK, "POST", "/admin/v1/shipments/"+sid+"/tracking", op, map[string]any{"tracking_number": "1Z999"})
	noop("the same tracking number", "POST", "/admin/v1/shipments/"+sid+"/tracking", op, map[string]any{"tracking_number": "1Z999"}, http.StatusOK)
	h.must(http.StatusOK, "POST", "/admin/v1/shipments/"+sid+"/delivered", op, nil)
	noop("a second delivered", "POST", "/admin/v1/shipments/"+sid+"/delivered", op, nil, http.StatusOK)

	// Vendors: vendor.created, vendor.updated, vendor.claimed.
	vendor := h.must(http.StatusCreated, "POST", fmt.Sprintf("/admin/v1/orgs/%s/vendors", h.org), op,
		map[string]any{"store_id": h.store, "name": "Clay Supply", "email": "clay@example.com"})
	vid := vendor["id"].(string)
	// vendor.created drops at the failing endpoint, which the worker then disables, emitting an event
	// of its own: wait for it here, so no write after this one races it.
	waitFor(t, 30*time.Second, "the failing endpoint's auto-disable", func() bool {
		var n int64
		h.db.Raw("SELECT count(*) FROM events WHERE type = ?", events.WebhookEndpointDisabled).Find(&n)
		return n == 1
	})
	h.must(http.StatusOK, "PATCH", "/admin/v1/vendors/"+vid, op, map[string]any{"phone": "+1 555 0199"})
	noop("an unchanged vendor edit", "PATCH", "/admin/v1/vendors/"+vid, op, map[string]any{"phone": "+1 555 0199"}, http.StatusOK)
	claim := h.must(http.StatusCreated, "POST", "/admin/v1/vendors/"+vid+"/claim-token", op, nil)
	h.must(http.StatusOK, "POST", "/v1/vendor-claims", "", map[string]any{"token": claim["token"], "email": "owner@clay.example"})

	// Operator clients and a hand-made order.
	client := h.must(http.StatusCreated, "POST", fmt.Sprintf("/admin/v1/orgs/%s/clients", h.org), op,
		map[string]any{"store_id": h.store, "email": "walkin@example.com", "first_name": "Walk"})
	noop("an unchanged client edit", "PATCH", "/admin/v1/clients/"+client["id"].(string), op, map[string]any{"first_name": "Walk"}, http.StatusOK)
	h.must(http.StatusOK, "PATCH", "/admin/v1/clients/"+client["id"].(string), op, map[string]any{"last_name": "In"})
	h.must(http.StatusCreated, "POST", fmt.Sprintf("/admin/v1/orgs/%s/orders", h.org), op, map[string]any{"store_id": h.store,
		"lines": []map[string]any{{"description": "Counter sale", "quantity": 1, "unit_price_cents": 900}}})

	h.must(http.StatusOK, "POST", "/v1/webhooks/test/"+ep.id.String(), h.readWriteKey, nil)

	want := h.orgEvents()
	waitFor(t, 30*time.Second, "every event delivered", func() bool { return int64(rc.count()) >= want })
	h.settled() // nothing more may arrive
	got := rc.deliveries()
	if int64(len(got)) != want {
		t.Fatalf("receiver got %d deliveries for %d events", len(got), want)
	}
	seen := map[string]json.RawMessage{}
	for _, d := range got {
		verify(t, d, ep.secret)
		if err := schemas.Validate(d.body); err != nil {
			t.Errorf("%s", err)
		}
		seen[d.eventType()] = d.body
	}
	for _, typ := range events.Types() {
		if seen[typ] == nil {
			t.Errorf("no %s arrived", typ)
		}
	}
	writeSamples(t, seen)
}

// writeSamples saves one real body of each type, indented, to the file WDS_EVENT_SAMPLES names
// (docs/events.md shows them); without it nothing is written.
func writeSamples(t *testing.T, bodies map[string]json.RawMessage) {
	file := os.Getenv("WDS_EVENT_SAMPLES")
	if file == "" {
		return
	}
	var out bytes.Buffer
	for _, typ := range events.Types() {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, bodies[typ], "", "  "); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "### %s\n\n```json\n%s\n```\n\n", typ, pretty.String())
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
