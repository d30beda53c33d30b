package api_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"wds/internal/apikeys"
	"wds/models"
)

// The line and tag limits hold on every write path, not only the Integration API's order create
// (TestBodyRules): its client upsert, the store-native receiver, and the operator's order and
// client, created and edited. Each refusal is 422 naming the field, and writes nothing.
func TestTheLimitsHoldOnEveryWritePath(t *testing.T) {
	lines := func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"description": "Mug", "quantity": 1, "unit_price_cents": 1}
		}
		return out
	}
	tags := func(n int) []string { return strings.Split(strings.Repeat("t,", n-1)+"t", ",") }
	asJSON := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	refused := func(t *testing.T, what string, status int, body []byte, want string) {
		t.Helper()
		var b struct{ Error, Detail string }
		_ = json.Unmarshal(body, &b)
		if status != http.StatusUnprocessableEntity || b.Error != "validation_failed" || b.Detail != want {
			t.Errorf("%s: %d %s, want 422 validation_failed %q", what, status, body, want)
		}
	}

	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	r := e.post("/integrations/v1/clients", k, asJSON(map[string]any{"external_id": "c-1", "tags": tags(101)}))
	refused(t, "an integration client", r.status, r.body, "tags: at most 100")
	native := e.mint(apikeys.NewIntegrationKey{PayloadFormat: models.FormatNativestore})
	var order map[string]any
	if err := json.Unmarshal([]byte(storeFixture(t, "pending_usd.json", "")), &order); err != nil {
		t.Fatal(err)
	}
	// 501 copies of its first item, the order's total following them, so only their number is wrong.
	cents := func(v any) int64 { f, _ := strconv.ParseFloat(v.(string), 64); return int64(math.Round(f * 100)) }
	total := cents(order["total"])
	for _, it := range order["line_items"].([]any) {
		total -= cents(it.(map[string]any)["total"])
	}
	item := order["line_items"].([]any)[0]
	items := make([]any, 501)
	for i := range items {
		items[i] = item
	}
	order["line_items"] = items
	total += 501 * cents(item.(map[string]any)["total"])
	order["total"] = fmt.Sprintf("%d.%02d", total/100, total%100)
	r = e.post(receiver, native, asJSON(order))
	refused(t, "a store-native order", r.status, r.body, "lines: at most 500")
	if n := e.count(`SELECT count(*) FROM orders`) + e.count(`SELECT count(*) FROM clients`); n != 0 {
		t.Fatalf("refused integration writes left %d orders and clients", n)
	}

	o := newKeysEnv(t)
	before := o.rowCounts()
	org := "/admin/v1/orgs/" + o.org.ID.String()
	status, raw := o.call("POST", org+"/orders", o.member, map[string]any{"store_id": o.store.ID, "lines": lines(501)})
	refused(t, "an operator's order", status, raw, "lines: at most 500")
	status, raw = o.call("POST", org+"/clients", o.member, map[string]any{"store_id": o.store.ID, "email": "kim@example.com", "tags": tags(101)})
	refused(t, "an operator's new client", status, raw, "tags: at most 100")
	if after := o.rowCounts(); after != before {
		t.Fatalf("refused operator writes changed rows: %s, then %s", before, after)
	}
	status, raw = o.call("POST", org+"/clients", o.member, map[string]any{"store_id": o.store.ID, "email": "kim@example.com", "tags": tags(100)})
	if status != http.StatusCreated {
		t.Fatalf("a client of 100 tags: %d %s", status, raw)
	}
	before = o.rowCounts()
	status, raw = o.call("PATCH", "/admin/v1/clients/"+decode[map[string]any](t, raw)["id"].(string), o.member, map[string]any{"tags": tags(101)})
	refused(t, "an operator's client edit", status, raw, "tags: at most 100")
	if after := o.rowCounts(); after != before {
		t.Fatalf("a refused client edit changed rows: %s, then %s", before, after)
	}
}
