package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/events/eventstest"
	"wds/internal/workspace"
	"wds/models"
)

// outsider is an operator token of another org.
func (e *keysEnv) outsider() string {
	e.t.Helper()
	_, tok, err := workspace.NewService(e.db).CreateUser(context.Background(), e.otherOrg, uuid.NewString()+"@elsewhere.test", models.RoleOwner)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// rowCounts is how many rows each table an app write may touch holds.
func (e *keysEnv) rowCounts() string {
	e.t.Helper()
	var out []string
	for _, table := range []string{"orders", "order_lines", "payments", "clients", "events", "audit_log"} {
		var n int64
		if err := e.db.Raw("SELECT count(*) FROM " + table).Find(&n).Error; err != nil {
			e.t.Fatal(err)
		}
		out = append(out, fmt.Sprint(table, "=", n))
	}
	return strings.Join(out, " ")
}

// eventTypes lists the types of the events written so far, oldest first, each body validated.
func (e *keysEnv) eventTypes() []string { e.t.Helper(); return eventstest.Written(e.t, e.db) }

func TestOperatorCreatesAnOrderByHand(t *testing.T) {
	e := newKeysEnv(t)
	path := "/admin/v1/orgs/" + e.org.ID.String() + "/orders"
	body := map[string]any{"store_id": e.store.ID, "external_id": "POS-1", "currency": "usd",
		"lines":   []map[string]any{{"description": "Mug", "quantity": 2, "unit_price_cents": 1250}},
		"client":  map[string]any{"email": "walk-in@example.com", "first_name": "Walk", "last_name": "In"},
		"payment": map[string]any{"amount_cents": 2500, "method": "cash"}}
	status, raw := e.call("POST", path, e.member, body)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, raw)
	}
	res := decode[map[string]any](t, raw)
	if res["status"] != "paid" || res["total_cents"] != float64(2500) || res["duplicate"] != false || res["payment_id"] == nil || res["client_id"] == nil {
		t.Fatalf("envelope %s", raw)
	}
	var src []struct {
		SourceKind string
		Currency   string
		Key        *uuid.UUID
	}
	e.db.Raw(`SELECT source_kind, currency, source_integration_key_id AS key FROM orders WHERE id = ?`, res["id"]).Find(&src)
	if len(src) != 1 || src[0].SourceKind != "app" || src[0].Currency != "USD" || src[0].Key != nil {
		t.Fatalf("stored %+v", src)
	}
	want := []string{events.ClientCreated, events.OrderCreated, events.PaymentRecorded}
	if got := e.eventTypes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}

	// The same external_id again: 200, the original, nothing written.
	before := e.rowCounts()
	status, raw = e.call("POST", path, e.owner, body)
	dup := decode[map[string]any](t, raw)
	if status != http.StatusOK || dup["duplicate"] != true || dup["id"] != res["id"] || dup["number"] != res["number"] {
		t.Fatalf("repeat: %d %s", status, raw)
	}
	if after := e.rowCounts(); after != before {
		t.Fatalf("a repeat wrote rows: %s -> %s", before, after)
	}
	var actions []string
	e.db.Raw(`SELECT action FROM audit_log WHERE org_id = ?`, e.org.ID).Find(&actions)
	if fmt.Sprint(actions) != "[order.create]" {
		t.Fatalf("audit %v", actions)
	}
}

func TestOperatorOrderCreateRefusals(t *testing.T) {
	e := newKeysEnv(t)
	org := "/admin/v1/orgs/" + e.org.ID.String()
	store := e.store.ID.String()
	_, otherStore, _ := mustOrg(t, e.db, "Third")
	outsider := e.outsider()
	cases := []struct {
		path, token string
		body        any
		status      int
		code        string
		field       string
	}{
		{org + "/orders", "", `{}`, 401, "missing_authorization", ""},
		{"/admin/v1/orgs/nope/orders", e.owner, `{}`, 404, "not_found", ""},
		{org + "/orders", outsider, `{"store_id": "` + store + `", "lines": [{"quantity": 1}]}`, 404, "not_found", ""},
		{org + "/orders", outsider, `{"lines": "wrong"}`, 422, "validation_failed", "lines"}, // JSON types are read first
		{org + "/orders", e.owner, `[1]`, 400, "invalid_json", ""},
		{org + "/orders", e.owner, `{"store_id": `, 400, "invalid_json", ""},
		{org + "/orders", e.owner, `{"metadata": "` + strings.Repeat("x", 1<<20) + `"}`, 413, "payload_too_large", ""},
		{org + "/orders", e.owner, `{"lines": [{"quantity": 1}]}`, 422, "validation_failed", "store_id"},
		{org + "/orders", e.owner, `{"store_id": "shop", "lines": [{"quantity": 1}]}`, 422, "validation_failed", "store_id"},
		{org + "/orders", e.owner, `{"store_id": 7, "lines": [{"quantity": 1}]}`, 422, "validation_failed", "store_id"},
		{org + "/orders", e.owner, `{"store_id": "` + otherStore.ID.String() + `", "lines": [{"quantity": 1}]}`, 404, "not_found", ""},
		{org + "/orders", e.owner, `{"store_id": "` + store + `"}`, 422, "lines_required", ""},
		{org + "/orders", e.owner, `{"store_id": "` + store + `", "lines": [{"quantity": 1}, {"quantity": "2"}]}`, 422, "validation_failed", "lines[1].quantity"},
		{org + "/orders", e.owner, `{"store_id": "` + store + `", "lines": [{"quantity": -1}]}`, 422, "validation_failed", "lines[0].quantity"},
		{org + "/orders", e.owner, `{"store_id": "` + store + `", "lines": [{"quantity": 1}], "currency": "€"}`, 422, "validation_failed", "currency"},
		{org + "/orders", e.owner, `{"store_id": "` + store + `", "lines": [{"quantity": 1}], "payment": {"amount_cents": 1}}`, 422, "amount_exceeds_balance", ""},
		{org + "/orders", e.owner, `{"store_id": "` + store + `", "lines": [{"quantity": 1}], "payment": {"paid_at": "soon"}}`, 422, "validation_failed", "payment.paid_at"},
		{org + "/orders", e.owner, `{"store_id": "` + store + `", "lines": [{"quantity": 1}], "client": {"email": "nope"}}`, 422, "validation_failed", "client.email"},
		{org + "/orders", e.owner, `{"store_id": "` + store + `", "lines": [{"quantity": 1}], "client": {"tags": [` +
			strings.TrimSuffix(strings.Repeat(`"t",`, 101), ",") + `]}}`, 422, "validation_failed", "client.tags"},
	}
	before := e.rowCounts()
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d %s %.40v", c.status, c.code, c.body), func(t *testing.T) {
			status, body := e.call("POST", c.path, c.token, c.body)
			wantError(t, status, body, c.status, c.code)
			if detail := decode[map[string]string](t, body)["detail"]; !strings.HasPrefix(detail, c.field) {
				t.Errorf("detail %q does not name %s", detail, c.field)
			}
		})
	}
	if after := e.rowCounts(); after != before {
		t.Fatalf("failed requests wrote rows: %s -> %s", before, after)
	}
}

func TestConcurrentOperatorOrderCreatesOfOneExternalID(t *testing.T) {
	e := newKeysEnv(t)
	path := "/admin/v1/orgs/" + e.org.ID.String() + "/orders"
	body := map[string]any{"store_id": e.store.ID, "external_id": "RACE-1", "lines": []map[string]any{{"quantity": 1, "unit_price_cents": 100}}}
	const n = 20
	statuses := make([]int, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var raw []byte
			statuses[i], raw = e.call("POST", path, e.member, body)
			var r struct{ ID string }
			_ = json.Unmarshal(raw, &r)
			ids[i] = r.ID
		})
	}
	wg.Wait()
	created := 0
	for i := range n {
		switch statuses[i] {
		case http.StatusCreated:
			created++
		case http.StatusOK:
		default:
			t.Fatalf("status %d", statuses[i])
		}
		if ids[i] != ids[0] || ids[i] == "" {
			t.Fatalf("answers name different orders: %v", ids)
		}
	}
	var orders int64
	e.db.Raw(`SELECT count(*) FROM orders`).Find(&orders)
	if created != 1 || orders != 1 {
		t.Fatalf("%d created, %d orders", created, orders)
	}
	if got := e.eventTypes(); len(got) != 1 {
		t.Fatalf("events %v", got)
	}
}

func TestOperatorAddsAndEditsClients(t *testing.T) {
	e := newKeysEnv(t)
	create := "/admin/v1/orgs/" + e.org.ID.String() + "/clients"
	status, raw := e.call("POST", create, e.member, map[string]any{"store_id": e.store.ID, "email": "kim@example.com",
		"first_name": "Kim", "last_name": "Lee", "phone": "+1 555 0100", "client_type": "wholesale", "tags": []string{"vip"},
		"billing_address": map[string]any{"address_line1": "1 Main St", "city": "Springfield", "state": "IL", "postal_code": "62701", "country": "US"}})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, raw)
	}
	c := decode[map[string]any](t, raw)
	if c["display_name"] != "Kim Lee" || c["source"] != nil || c["client_type"] != "wholesale" {
		t.Fatalf("created %s", raw)
	}
	patch := "/admin/v1/clients/" + c["id"].(string)

	// Nothing changes: 200, the client as it was, no event, no audit row.
	status, raw = e.call("PATCH", patch, e.owner, `{"first_name": "Kim", "unknown": [1, 2]}`)
	if same := decode[map[string]any](t, raw); status != http.StatusOK || same["updated_at"] != c["updated_at"] {
		t.Fatalf("no-op edit: %d %s", status, raw)
	}
	status, raw = e.call("PATCH", patch, e.owner, nil)
	if status != http.StatusOK {
		t.Fatalf("empty edit: %d %s", status, raw)
	}
	// null clears; only what is sent changes.
	status, raw = e.call("PATCH", patch, e.owner, `{"email": null, "phone": null, "tags": null, "billing_address": null, "last_name": "Park"}`)
	edited := decode[map[string]any](t, raw)
	if status != http.StatusOK || edited["email"] != nil || edited["phone"] != "" || len(edited["tags"].([]any)) != 0 ||
		edited["billing_address"] != nil || edited["last_name"] != "Park" || edited["first_name"] != "Kim" || edited["updated_at"] == c["updated_at"] {
		t.Fatalf("edit: %d %s", status, raw)
	}
	want := []string{events.ClientCreated, events.ClientUpdated}
	if got := e.eventTypes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	var actions []string
	e.db.Raw(`SELECT action FROM audit_log WHERE org_id = ? ORDER BY created_at`, e.org.ID).Find(&actions)
	if fmt.Sprint(actions) != "[client.create client.update]" {
		t.Fatalf("audit %v", actions)
	}
}

func TestOperatorClientRefusals(t *testing.T) {
	e := newKeysEnv(t)
	create := "/admin/v1/orgs/" + e.org.ID.String() + "/clients"
	_, raw := e.call("POST", create, e.owner, map[string]any{"store_id": e.store.ID, "email": "taken@example.com"})
	taken := decode[map[string]any](t, raw)
	_, raw = e.call("POST", create, e.owner, map[string]any{"store_id": e.store.ID, "first_name": "Mo"})
	mine := "/admin/v1/clients/" + decode[map[string]any](t, raw)["id"].(string)
	other, otherStore, otherOwner := mustOrg(t, e.db, "Theirs")
	_, otherTok, _ := workspace.NewService(e.db).CreateUser(context.Background(), other.ID, uuid.NewString()+"@theirs.test", models.RoleMember)
	_, raw = e.call("POST", "/admin/v1/orgs/"+other.ID.String()+"/clients", otherTok, map[string]any{"store_id": otherStore.ID})
	theirs := "/admin/v1/clients/" + decode[map[string]any](t, raw)["id"].(string)
	_ = otherOwner
	store := e.store.ID.String()
	long := func(field string, n int) string { return `{"` + field + `": "` + strings.Repeat("x", n) + `"}` }
	cases := []struct {
		method, path, token string
		body                any
		status              int
		code                string
		field               string
	}{
		{"POST", create, "", `{}`, 401, "missing_authorization", ""},
		{"POST", create, otherTok, `{"store_id": "` + store + `"}`, 404, "not_found", ""},
		{"POST", create, e.member, `{"store_id": "` + otherStore.ID.String() + `"}`, 404, "not_found", ""},
		{"POST", create, e.member, `{}`, 422, "validation_failed", "store_id"},
		{"POST", create, e.member, `"client"`, 400, "invalid_json", ""},
		{"POST", create, e.member, `{"store_id": "` + store + `", "tags": "vip"}`, 422, "validation_failed", "tags"},
		{"POST", create, e.member, `{"store_id": "` + store + `", "email": "TAKEN@example.com"}`, 409, "conflict", ""},
		{"POST", create, e.member, `{"store_id": "` + store + `", "phone": "` + strings.Repeat("9", 1<<20) + `"}`, 413, "payload_too_large", ""},
		{"PATCH", theirs, e.member, `{"first_name": "Mine now"}`, 404, "not_found", ""},
		{"PATCH", "/admin/v1/clients/" + uuid.NewString(), e.member, `{}`, 404, "not_found", ""},
		{"PATCH", "/admin/v1/clients/not-a-uuid", e.member, `{}`, 404, "not_found", ""},
		{"PATCH", mine, "", `{}`, 401, "missing_authorization", ""},
		{"PATCH", mine, e.member, `[]`, 400, "invalid_json", ""},
		{"PATCH", mine, e.member, `{"email": 5}`, 422, "validation_failed", "email"},
		{"PATCH", mine, e.member, `{"tags": [1]}`, 422, "validation_failed", "tags"},
		{"PATCH", mine, e.member, `{"billing_address": "1 Main St"}`, 422, "validation_failed", "billing_address"},
		{"PATCH", mine, e.member, `{"billing_address": {"city": 5}}`, 422, "validation_failed", "billing_address.city"},
		{"PATCH", mine, e.member, `{"client_type": "vip"}`, 422, "validation_failed", "client_type"},
		{"PATCH", mine, e.member, `{"email": "no-at-sign"}`, 422, "validation_failed", "email"},
		{"PATCH", mine, e.member, long("email", 321), 422, "validation_failed", "email"},
		{"PATCH", mine, e.member, long("first_name", 201), 422, "validation_failed", "first_name"},
		{"PATCH", mine, e.member, `{"tags": ["` + strings.Repeat("t", 101) + `"]}`, 422, "validation_failed", "tags[0]"},
		{"PATCH", mine, e.member, `{"email": "` + taken["email"].(string) + `"}`, 409, "conflict", ""},
		{"PATCH", mine, e.member, `{"first_name": "a\u0000b"}`, 422, "validation_failed", ""},
		{"PATCH", mine, e.member, `{"phone": "` + strings.Repeat("9", 1<<20) + `"}`, 413, "payload_too_large", ""},
	}
	before := e.rowCounts()
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %d %s %.30v", c.method, c.status, c.code, c.body), func(t *testing.T) {
			status, body := e.call(c.method, c.path, c.token, c.body)
			wantError(t, status, body, c.status, c.code)
			if detail := decode[map[string]string](t, body)["detail"]; !strings.HasPrefix(detail, c.field) {
				t.Errorf("detail %q does not name %s", detail, c.field)
			}
		})
	}
	if after := e.rowCounts(); after != before {
		t.Fatalf("failed requests wrote rows: %s -> %s", before, after)
	}
	e.eventTypes()
}
