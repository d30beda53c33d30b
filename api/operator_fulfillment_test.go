package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The shipment routes over HTTP: codes, bodies as the document describes them (every answer is
// checked against it), events only when something changed, and refusals that write nothing.
func TestOperatorShipsAnOrderOverHTTP(t *testing.T) {
	e := newKeysEnv(t)
	status, raw := e.call("POST", "/admin/v1/orgs/"+e.org.ID.String()+"/orders", e.member, map[string]any{"store_id": e.store.ID,
		"lines": []map[string]any{{"description": "Mug", "quantity": 1, "unit_price_cents": 900}}})
	if status != http.StatusCreated {
		t.Fatalf("order: %d %s", status, raw)
	}
	order := decode[map[string]any](t, raw)["id"].(string)
	seen := len(e.eventTypes())
	newEvents := func() string {
		got := e.eventTypes()
		defer func() { seen = len(got) }()
		return strings.Join(got[seen:], ",")
	}

	status, raw = e.call("POST", "/admin/v1/orders/"+order+"/shipments", e.member, map[string]any{"carrier": "UPS", "tracking_number": "1Z1"})
	ship := decode[map[string]any](t, raw)
	if status != http.StatusCreated || ship["status"] != "shipped" || ship["tracking_number"] != "1Z1" || ship["order_id"] != order {
		t.Fatalf("ship: %d %s", status, raw)
	}
	if got := newEvents(); got != "order.shipped,shipment.tracking_added" {
		t.Fatalf("ship emitted %s", got)
	}
	id := ship["id"].(string)
	for _, c := range []struct {
		path string
		body any
		want string
	}{
		{"/admin/v1/shipments/" + id + "/tracking", map[string]any{"tracking_number": "1Z1"}, ""},
		{"/admin/v1/shipments/" + id + "/tracking", map[string]any{"tracking_number": "1Z2"}, "shipment.tracking_added"},
		{"/admin/v1/shipments/" + id + "/delivered", nil, "order.delivered"},
		{"/admin/v1/shipments/" + id + "/delivered", `{}`, ""},
	} {
		if status, raw := e.call("POST", c.path, e.member, c.body); status != http.StatusOK {
			t.Fatalf("%s %v: %d %s", c.path, c.body, status, raw)
		}
		if got := newEvents(); got != c.want {
			t.Errorf("%s %v emitted %q, want %q", c.path, c.body, got, c.want)
		}
	}

	before := e.rowCounts()
	var shipments int64
	countShipments := func() int64 { e.db.Raw(`SELECT count(*) FROM shipments`).Find(&shipments); return shipments }
	n := countShipments()
	refusals := []struct {
		path, token string
		body        any
		status      int
		code        string
	}{
		{"/admin/v1/orders/" + order + "/shipments", e.member, `{"carrier": 7}`, 422, "validation_failed"},
		{"/admin/v1/orders/" + order + "/shipments", e.member, `{}`, 422, "validation_failed"},
		{"/admin/v1/orders/" + order + "/shipments", e.member, map[string]any{"carrier": strings.Repeat("x", 101)}, 422, "validation_failed"},
		{"/admin/v1/orders/" + order + "/shipments", e.member, map[string]any{"carrier": "UPS", "shipped_at": "yesterday"}, 422, "validation_failed"},
		{"/admin/v1/orders/" + order + "/shipments", e.member, `[1]`, 400, "invalid_json"},
		{"/admin/v1/orders/" + order + "/shipments", e.member, `{"carrier": "` + strings.Repeat("x", 1<<20) + `"}`, 413, "payload_too_large"},
		{"/admin/v1/orders/" + order + "/shipments", e.outsider(), map[string]any{"carrier": "UPS"}, 404, "not_found"},
		{"/admin/v1/orders/not-a-uuid/shipments", e.member, map[string]any{"carrier": "UPS"}, 404, "not_found"},
		{"/admin/v1/orders/" + order + "/shipments", "", map[string]any{"carrier": "UPS"}, 401, "missing_authorization"},
		{"/admin/v1/shipments/" + id + "/tracking", e.outsider(), map[string]any{"tracking_number": "9"}, 404, "not_found"},
		{"/admin/v1/shipments/" + id + "/tracking", e.member, map[string]any{"tracking_number": ""}, 422, "validation_failed"},
		{"/admin/v1/shipments/" + id + "/delivered", e.member, map[string]any{"delivered_at": 5}, 422, "validation_failed"},
	}
	for _, r := range refusals {
		status, raw := e.call("POST", r.path, r.token, r.body)
		if status != r.status || decode[map[string]any](t, raw)["error"] != r.code {
			t.Errorf("POST %s %.60v: %d %s, want %d %s", r.path, fmt.Sprint(r.body), status, raw, r.status, r.code)
		}
	}
	e.db.Exec(`UPDATE orders SET status = 'cancelled' WHERE id = ?`, order)
	status, raw = e.call("POST", "/admin/v1/orders/"+order+"/shipments", e.owner, map[string]any{"carrier": "UPS"})
	if status != http.StatusConflict || decode[map[string]any](t, raw)["error"] != "order_not_shippable" {
		t.Errorf("a cancelled order: %d %s", status, raw)
	}
	if after := e.rowCounts(); after != before || countShipments() != n {
		t.Errorf("refusals wrote rows: %s -> %s", before, after)
	}
}
