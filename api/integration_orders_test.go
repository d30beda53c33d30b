package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/internal/ingest"
	"wds/internal/order"
	"wds/internal/platform/paging"
	"wds/models"
)

// orderBody builds a create body: lines of (quantity, unit price), optional payment amount.
func orderBody(ext string, shipping, tax int64, payment *int64, lines ...[2]int64) string {
	m := map[string]any{"external_id": ext, "currency": "usd", "shipping_cents": shipping, "tax_cents": tax}
	var ls []map[string]any
	for i, l := range lines {
		ls = append(ls, map[string]any{"description": fmt.Sprintf("item %d", i), "quantity": l[0], "unit_price_cents": l[1],
			"metadata": map[string]any{"sku": fmt.Sprintf("SKU-%d", i)}})
	}
	m["lines"] = ls
	if payment != nil {
		m["payment"] = map[string]any{"external_id": "pay-" + ext, "amount_cents": *payment, "method": "card",
			"provider": "stripe", "provider_payment_id": "pi_" + ext}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// TestOrderCreateStatusTable covers the four creation rows of the order-status table.
func TestOrderCreateStatusTable(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	cases := []struct {
		name    string
		payment *int64
		lines   [][2]int64
		status  string
		paid    int64
		events  []string
	}{
		{"full inline payment", ptr[int64](2700), [][2]int64{{2, 1000}, {1, 500}}, "paid", 2700, []string{"order.created", "payment.recorded"}},
		{"partial inline payment", ptr[int64](700), [][2]int64{{2, 1000}, {1, 500}}, "partially_paid", 700, []string{"order.created", "payment.recorded"}},
		{"no payment, positive total", nil, [][2]int64{{2, 1000}, {1, 500}}, "invoiced", 0, []string{"order.created"}},
		{"no payment, zero total", nil, [][2]int64{{1, 0}}, "paid", 0, []string{"order.created"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.events())
			ext := fmt.Sprintf("ord-%d", i)
			shipping, tax := int64(0), int64(0)
			if tc.lines[0][1] > 0 {
				shipping, tax = 150, 50
			}
			r := e.post("/integrations/v1/orders", k, orderBody(ext, shipping, tax, tc.payment, tc.lines...)).want(t, http.StatusCreated, "")
			var total int64
			for _, l := range tc.lines {
				total += l[0] * l[1]
			}
			total += shipping + tax
			if r["status"] != tc.status || int64(r["total_cents"].(float64)) != total || int64(r["amount_paid_cents"].(float64)) != tc.paid ||
				r["external_id"] != ext || r["duplicate"] != false {
				t.Fatalf("envelope %v", r)
			}
			if (tc.payment != nil) != (r["payment_id"] != nil) {
				t.Fatalf("payment_id %v with payment %v", r["payment_id"], tc.payment)
			}
			if got := e.events()[before:]; strings.Join(got, ",") != strings.Join(tc.events, ",") {
				t.Fatalf("events %v, want %v", got, tc.events)
			}
			o := e.get("/integrations/v1/orders/by-external/"+ext, k).want(t, http.StatusOK, "")
			src := o["source"].(map[string]any)
			if o["status"] != tc.status || o["currency"] != "USD" || src["kind"] != "integration" ||
				src["integration_key_id"] != k.ID.String() || src["label"] != "Test shop" || len(o["lines"].([]any)) != len(tc.lines) {
				t.Fatalf("order %v", o)
			}
		})
	}
}

func TestOrderCreateEventPayloads(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	r := e.post("/integrations/v1/orders", k, orderBody("ev-1", 100, 0, ptr[int64](2100), [2]int64{2, 1000})).want(t, http.StatusCreated, "")
	ev := e.eventBody("order.created")
	data := ev["data"].(map[string]any)
	if ev["type"] != "order.created" || ev["org_id"] != e.org.ID.String() || ev["store_id"] != e.store.ID.String() ||
		data["id"] != r["id"] || data["total_cents"] != float64(2100) || len(data["lines"].([]any)) != 1 || data["number"] != r["number"] {
		t.Fatalf("order.created body %v", ev)
	}
	pev := e.eventBody("payment.recorded")["data"].(map[string]any)
	if pev["payment"].(map[string]any)["id"] != r["payment_id"] || pev["order"].(map[string]any)["status"] != "paid" {
		t.Fatalf("payment.recorded data %v", pev)
	}
}

func TestOrderDefaultsToStoreCurrencyAndNumbersIncrease(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	a := e.post("/integrations/v1/orders", k, `{"external_id":"a","lines":[{"quantity":1,"unit_price_cents":5}]}`).want(t, http.StatusCreated, "")
	b := e.post("/integrations/v1/orders", k, `{"external_id":"b","lines":[{"quantity":1,"unit_price_cents":5}]}`).want(t, http.StatusCreated, "")
	if a["number"] != "1001" || b["number"] != "1002" {
		t.Fatalf("numbers %v %v", a["number"], b["number"])
	}
	o := e.get("/integrations/v1/orders/by-external/a", k).want(t, http.StatusOK, "")
	if o["currency"] != e.store.Currency {
		t.Fatalf("currency %v, want the store's %s", o["currency"], e.store.Currency)
	}
}

func TestDuplicateExternalIDReturnsOriginal(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	first := e.post("/integrations/v1/orders", k, orderBody("dup", 0, 0, ptr[int64](1000), [2]int64{1, 1000})).want(t, http.StatusCreated, "")
	events := len(e.events())
	// A different body with the same external_id is still the same order.
	again := e.post("/integrations/v1/orders", k, orderBody("dup", 0, 0, nil, [2]int64{5, 5})).want(t, http.StatusOK, "")
	if again["id"] != first["id"] || again["duplicate"] != true || again["total_cents"] != first["total_cents"] ||
		again["payment_id"] != first["payment_id"] {
		t.Fatalf("duplicate %v, first %v", again, first)
	}
	if len(e.events()) != events || e.count(`SELECT count(*) FROM orders`) != 1 || e.count(`SELECT count(*) FROM payments`) != 1 {
		t.Fatal("a duplicate wrote rows or events")
	}
	// External ids are per key: another key of the same store makes its own order.
	k2 := e.mint(apikeys.NewIntegrationKey{})
	other := e.post("/integrations/v1/orders", k2, orderBody("dup", 0, 0, nil, [2]int64{1, 1})).want(t, http.StatusCreated, "")
	if other["id"] == first["id"] {
		t.Fatal("a second key's external_id reused the first key's order")
	}
}

func TestPaymentsMoveOrderForward(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	o := e.post("/integrations/v1/orders", k, orderBody("p", 0, 0, nil, [2]int64{1, 1000})).want(t, http.StatusCreated, "")
	path := "/integrations/v1/orders/" + o["id"].(string) + "/payments"
	steps := []struct {
		ext    string
		amount int64
		status string
		paid   int64
	}{{"p1", 300, "partially_paid", 300}, {"p2", 200, "partially_paid", 500}, {"p3", 500, "paid", 1000}}
	for _, s := range steps {
		r := e.post(path, k, fmt.Sprintf(`{"external_id":%q,"amount_cents":%d,"method":"card","paid_at":"2026-01-02T03:04:05.123Z"}`, s.ext, s.amount)).
			want(t, http.StatusCreated, "")
		if r["order_status"] != s.status || r["amount_paid_cents"] != float64(s.paid) || r["duplicate"] != false || r["order_id"] != o["id"] {
			t.Fatalf("after %s: %v", s.ext, r)
		}
	}
	if n := e.count(`SELECT count(*) FROM events WHERE type = 'payment.recorded'`); n != 3 {
		t.Fatalf("%d payment.recorded events", n)
	}
	dup := e.post(path, k, `{"external_id":"p1","amount_cents":300}`).want(t, http.StatusOK, "")
	if dup["duplicate"] != true || dup["amount_cents"] != float64(300) || dup["order_status"] != "paid" {
		t.Fatalf("duplicate payment %v", dup)
	}
	e.post(path, k, `{"external_id":"p4","amount_cents":1}`).want(t, http.StatusUnprocessableEntity, "amount_exceeds_balance")
	e.post(path, k, `{"amount_cents":1}`).want(t, http.StatusUnprocessableEntity, "external_id_required")
	e.post(path, k, `{"external_id":"p5","amount_cents":0}`).want(t, http.StatusUnprocessableEntity, "validation_failed")
	if n := e.count(`SELECT count(*) FROM events WHERE type = 'payment.recorded'`); n != 3 {
		t.Fatalf("%d payment.recorded events after failures", n)
	}
	inline := e.post("/integrations/v1/orders", k, orderBody("over", 0, 0, ptr[int64](2000), [2]int64{1, 1000}))
	inline.want(t, http.StatusUnprocessableEntity, "amount_exceeds_balance")

	// invoiced straight to paid with one payment of the whole total.
	whole := e.post("/integrations/v1/orders", k, orderBody("whole", 0, 0, nil, [2]int64{1, 1000})).want(t, http.StatusCreated, "")
	r := e.post("/integrations/v1/orders/"+whole["id"].(string)+"/payments", k, `{"external_id":"w1","amount_cents":1000}`).
		want(t, http.StatusCreated, "")
	if r["order_status"] != "paid" || r["amount_paid_cents"] != float64(1000) {
		t.Fatalf("invoiced to paid: %v", r)
	}
}

func TestCancelAndRefund(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	o := e.post("/integrations/v1/orders", k, orderBody("c", 0, 0, ptr[int64](1000), [2]int64{1, 1000})).want(t, http.StatusCreated, "")
	refund := "/integrations/v1/payments/" + o["payment_id"].(string) + "/refund"
	e.post(refund, k, `{"amount_cents":999}`).want(t, http.StatusUnprocessableEntity, "partial_refund_not_supported")
	r := e.post(refund, k, `{"amount_cents":1000}`).want(t, http.StatusOK, "")
	if r["refunded"] != true || r["already_refunded"] != false || r["order_status"] != "refunded" || r["amount_paid_cents"] != float64(0) {
		t.Fatalf("refund %v", r)
	}
	pev := e.eventBody("payment.refunded")["data"].(map[string]any)
	if pev["payment"].(map[string]any)["refunded"] != true || pev["order"].(map[string]any)["status"] != "refunded" {
		t.Fatalf("payment.refunded data %v", pev)
	}
	again := e.post(refund, k, "").want(t, http.StatusOK, "")
	if again["already_refunded"] != true || e.count(`SELECT count(*) FROM events WHERE type = 'payment.refunded'`) != 1 {
		t.Fatalf("second refund %v", again)
	}
	e.post("/integrations/v1/orders/"+o["id"].(string)+"/payments", k, `{"external_id":"late","amount_cents":1}`).
		want(t, http.StatusConflict, "order_not_payable")

	cancel := "/integrations/v1/orders/" + o["id"].(string) + "/cancel"
	c := e.post(cancel, k, "").want(t, http.StatusOK, "")
	if c["status"] != "cancelled" || c["already_cancelled"] != false || c["id"] != o["id"] {
		t.Fatalf("cancel %v", c)
	}
	if ev := e.eventBody("order.cancelled")["data"].(map[string]any); ev["status"] != "cancelled" || ev["cancelled_at"] == nil {
		t.Fatalf("order.cancelled data %v", ev)
	}
	c2 := e.post(cancel, k, "").want(t, http.StatusOK, "")
	if c2["already_cancelled"] != true || e.count(`SELECT count(*) FROM events WHERE type = 'order.cancelled'`) != 1 {
		t.Fatalf("second cancel %v", c2)
	}
}

func TestRefundOfOneOfSeveralPaymentsAndOfCancelledOrder(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	o := e.post("/integrations/v1/orders", k, orderBody("two", 0, 0, ptr[int64](400), [2]int64{1, 1000})).want(t, http.StatusCreated, "")
	id := o["id"].(string)
	p2 := e.post("/integrations/v1/orders/"+id+"/payments", k, `{"external_id":"second","amount_cents":600}`).want(t, http.StatusCreated, "")
	r := e.post("/integrations/v1/payments/"+p2["id"].(string)+"/refund", k, "").want(t, http.StatusOK, "")
	if r["order_status"] != "partially_paid" || r["amount_paid_cents"] != float64(400) {
		t.Fatalf("refund of one of two %v", r)
	}
	e.post("/integrations/v1/orders/"+id+"/cancel", k, "").want(t, http.StatusOK, "")
	r = e.post("/integrations/v1/payments/"+o["payment_id"].(string)+"/refund", k, "").want(t, http.StatusOK, "")
	if r["order_status"] != "cancelled" || r["amount_paid_cents"] != float64(0) {
		t.Fatalf("refund on a cancelled order %v", r)
	}
}

// TestClientResolution covers the three rules, for /clients and for a client nested in an order.
func TestClientResolution(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{Label: "Shopify"})
	created := e.post("/integrations/v1/clients", k, `{"external_id":"c-1","email":"Ann@Example.com","first_name":"Ann","tags":["vip"]}`).
		want(t, http.StatusCreated, "")
	if created["created"] != true || created["updated"] != false {
		t.Fatalf("create %v", created)
	}
	var src struct {
		SourceLabel, SourceExternalID string
		SourceIntegrationKeyID        uuid.UUID
	}
	e.db.Raw(`SELECT source_label, source_external_id, source_integration_key_id FROM clients WHERE id = ?`, created["id"]).Scan(&src)
	if src.SourceLabel != "Shopify" || src.SourceExternalID != "c-1" || src.SourceIntegrationKeyID != k.ID {
		t.Fatalf("source stamp %+v", src)
	}
	// Rule 1: the same external_id names the same client; a changed field is an update.
	same := e.post("/integrations/v1/clients", k, `{"external_id":"c-1","phone":"+1 555"}`).want(t, http.StatusOK, "")
	if same["id"] != created["id"] || same["updated"] != true {
		t.Fatalf("rule 1 %v", same)
	}
	unchanged := e.post("/integrations/v1/clients", k, `{"external_id":"c-1","phone":"+1 555"}`).want(t, http.StatusOK, "")
	if unchanged["updated"] != false {
		t.Fatalf("no change reported as update %v", unchanged)
	}
	if got := e.count(`SELECT count(*) FROM events WHERE type = 'client.updated'`); got != 1 {
		t.Fatalf("%d client.updated events, want 1", got)
	}
	// Rule 2: a new external_id with a known email (any case) adopts that client.
	adopted := e.post("/integrations/v1/orders", k, `{"external_id":"o-1","client":{"external_id":"c-2","email":"ann@EXAMPLE.com"},
		"lines":[{"quantity":1,"unit_price_cents":100}]}`).want(t, http.StatusCreated, "")
	if adopted["client_id"] != created["id"] {
		t.Fatalf("rule 2 attached %v, want %v", adopted["client_id"], created["id"])
	}
	byNewExt := e.post("/integrations/v1/clients", k, `{"external_id":"c-2"}`).want(t, http.StatusOK, "")
	if byNewExt["id"] != created["id"] {
		t.Fatal("the adopted external_id does not name the client")
	}
	// Rule 3: unknown external_id and email make a new client.
	fresh := e.post("/integrations/v1/orders", k, `{"external_id":"o-2","client":{"external_id":"c-3","email":"bob@example.com"},
		"lines":[{"quantity":1,"unit_price_cents":100}]}`).want(t, http.StatusCreated, "")
	if fresh["client_id"] == created["id"] || fresh["client_id"] == nil {
		t.Fatalf("rule 3 client %v", fresh["client_id"])
	}
	if n := e.count(`SELECT count(*) FROM clients`); n != 2 {
		t.Fatalf("%d clients, want 2", n)
	}
	e.post("/integrations/v1/clients", k, `{"email":"x@example.com"}`).want(t, http.StatusUnprocessableEntity, "external_id_required")
	e.post("/integrations/v1/clients", k, `{"external_id":"c-9","client_type":"alien"}`).want(t, http.StatusUnprocessableEntity, "validation_failed")
}

// Client events are built from the row the write returned, not from a second read: they must still
// carry the client exactly as the Read API's view of it, empty tags included.
func TestClientEventsCarryTheClientAsStored(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{Label: "Shop"})
	matchesView := func(typ string, id any) map[string]any {
		t.Helper()
		data := e.eventBody(typ)["data"].(map[string]any)
		c, err := ingest.GetClient(context.Background(), e.db, paging.Scope{OrgID: e.org.ID}, uuid.MustParse(id.(string)))
		if err != nil {
			t.Fatal(err)
		}
		if want := asJSONObject(t, c); !reflect.DeepEqual(data, want) {
			t.Fatalf("%s data %v\nwant %v", typ, data, want)
		}
		return data
	}
	created := e.post("/integrations/v1/clients", k, `{"external_id":"c-1","email":"a@example.com","first_name":"Ann"}`).
		want(t, http.StatusCreated, "")
	if data := matchesView("client.created", created["id"]); fmt.Sprint(data["tags"]) != "[]" || data["display_name"] != "Ann" {
		t.Fatalf("client.created data %v", data)
	}
	e.post("/integrations/v1/clients", k, `{"external_id":"c-1","tags":["vip"],"billing_address":{"city":"Oslo"}}`).
		want(t, http.StatusOK, "")
	if data := matchesView("client.updated", created["id"]); fmt.Sprint(data["tags"]) != "[vip]" {
		t.Fatalf("client.updated data %v", data)
	}
}

// Order events are built from the rows the create's INSERT returned, not from a second read: they
// must carry the order exactly as the Read API's view of it, lines, payment and times included.
func TestOrderEventsCarryTheOrderAsStored(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{Label: "Shop", Scopes: []string{models.ScopeOrdersWrite, models.ScopePaymentsWrite}})
	created := e.post("/integrations/v1/orders", k, `{"external_id":"o-1","shipping_cents":250,"metadata":{"channel":"web"},
		"client":{"external_id":"c-1","email":"a@example.com"},
		"lines":[{"description":"Tea","quantity":2,"unit_price_cents":450,"metadata":{"sku":"T-1"}},
			{"description":"Cup","quantity":1,"unit_price_cents":1200}],
		"payment":{"external_id":"p-1","amount_cents":1000,"method":"card","provider":"stripe","provider_payment_id":"pi_1"}}`).
		want(t, http.StatusCreated, "")
	v, err := order.Get(context.Background(), e.db, paging.Scope{OrgID: e.org.ID}, uuid.MustParse(created["id"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	want := asJSONObject(t, v)
	if got := e.eventBody("order.created")["data"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("order.created data %v\nwant %v", got, want)
	}
	if got := e.eventBody("payment.recorded")["data"].(map[string]any)["order"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("payment.recorded order %v\nwant %v", got, want)
	}
	if lines := want["lines"].([]any); len(lines) != 2 || len(want["payments"].([]any)) != 1 || want["status"] != "partially_paid" {
		t.Fatalf("view %v", want)
	}
}

// asJSONObject is v as an event body's data decodes: its JSON as a generic object.
func asJSONObject(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEmailMatchIsPerStore(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	e.post("/integrations/v1/clients", k, `{"external_id":"a","email":"same@example.com"}`).want(t, http.StatusCreated, "")
	other := mustStore(t, e, "Second")
	k2 := e.mint(apikeys.NewIntegrationKey{OrgID: e.org.ID, StoreID: other})
	e.post("/integrations/v1/clients", k2, `{"external_id":"b","email":"same@example.com"}`).want(t, http.StatusCreated, "")
}

func TestPaymentBlockNeedsPaymentsWrite(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{Scopes: []string{models.ScopeOrdersWrite}})
	e.post("/integrations/v1/orders", k, orderBody("s", 0, 0, ptr[int64](100), [2]int64{1, 100})).want(t, http.StatusForbidden, "insufficient_scope")
	e.post("/integrations/v1/orders", k, orderBody("s", 0, 0, nil, [2]int64{1, 100})).want(t, http.StatusCreated, "")
	if n := e.count(`SELECT count(*) FROM payments`); n != 0 {
		t.Fatal("a payment was written without payments:write")
	}
}

// TestLinesKeepTheirText: line text and metadata travel to PostgreSQL as arrays; quoting must not
// alter them.
func TestLinesKeepTheirText(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	lines := []map[string]any{
		{"description": `a "quoted", {braced} \ back\\slash`, "quantity": 1, "unit_price_cents": 1, "metadata": map[string]any{"sku": `x"y\z`, "n": []any{1.5, nil, "}"}}},
		{"description": "NULL", "quantity": 2, "unit_price_cents": 2},
		{"description": "", "quantity": 3, "unit_price_cents": 3, "metadata": map[string]any{}},
		{"description": "héllo ✓ 日本", "quantity": 4, "unit_price_cents": 4},
	}
	body, _ := json.Marshal(map[string]any{"external_id": "text", "lines": lines})
	e.post("/integrations/v1/orders", k, string(body)).want(t, http.StatusCreated, "")
	o := e.get("/integrations/v1/orders/by-external/text", k).want(t, http.StatusOK, "")
	got := o["lines"].([]any)
	for i, want := range lines {
		g := got[i].(map[string]any)
		if g["description"] != want["description"] || g["quantity"] != float64(want["quantity"].(int)) {
			t.Errorf("line %d: %v, want %v", i, g, want)
		}
		wm, _ := json.Marshal(want["metadata"])
		if want["metadata"] == nil {
			wm = []byte("{}")
		}
		gm, _ := json.Marshal(g["metadata"])
		if string(gm) != string(wm) {
			t.Errorf("line %d metadata %s, want %s", i, gm, wm)
		}
	}
}

// TestMetadataNumbersBeyondFloat64RoundTrip: metadata is free-form JSON, so an integer above 2^53
// (which a float64 cannot hold) must come back digit for digit from the Read API, the Integration
// API and the order.created event, in the order's metadata and a line's alike.
func TestMetadataNumbersBeyondFloat64RoundTrip(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	const meta = `{"above_2_53":9007199254740993,"above_int64":12345678901234567890,"negative":-9007199254740995,
		"decimal":0.30000000000000004,"list":[9007199254740993,1],"nested":{"n":18446744073709551617}}`
	const lineMeta = `{"sku":"S-1","id":9007199254740993}`
	created := e.post("/integrations/v1/orders", k, `{"external_id":"big","metadata":`+meta+`,
		"lines":[{"quantity":1,"unit_price_cents":100,"metadata":`+lineMeta+`}]}`).want(t, http.StatusCreated, "")
	id := created["id"].(string)

	want, wantLine := decodeNumbers(t, []byte(meta)), decodeNumbers(t, []byte(lineMeta))
	check := func(where string, order []byte) {
		t.Helper()
		var o struct {
			Metadata json.RawMessage
			Lines    []struct{ Metadata json.RawMessage }
		}
		if err := json.Unmarshal(order, &o); err != nil || len(o.Lines) != 1 {
			t.Fatalf("%s: not an order with one line (%v): %s", where, err, order)
		}
		if got := decodeNumbers(t, o.Metadata); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: metadata %s, want %s", where, o.Metadata, meta)
		}
		if got := decodeNumbers(t, o.Lines[0].Metadata); !reflect.DeepEqual(got, wantLine) {
			t.Errorf("%s: line metadata %s, want %s", where, o.Lines[0].Metadata, lineMeta)
		}
	}

	readKey := mustReadKey(t, e.db, e.org.ID, e.owner.ID, models.ScopeReadOnly, nil)
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/v1/orders/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+readKey)
	res, err := openapitest.Client(t, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/orders/%s: %d %s", id, res.StatusCode, body)
	}
	check("Read API", body)
	check("Integration API", e.get("/integrations/v1/orders/by-external/big", k).body)
	var event []string
	e.db.Raw(`SELECT body::jsonb->>'data' FROM events WHERE type = 'order.created'`).Find(&event)
	if len(event) != 1 {
		t.Fatalf("%d order.created events", len(event))
	}
	check("order.created", []byte(event[0]))
}

// decodeNumbers decodes JSON keeping every number's digits (json.Number).
func decodeNumbers(t *testing.T, raw []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return v
}
