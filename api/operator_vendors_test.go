package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"wds/api/openapi/openapitest"
)

// The vendor routes over HTTP, checked against the documents: add, edit (no-op included), claim
// token for owners only, the public claim with its refusals, and a claim token that never reaches a
// log line.
func TestVendorsAreAddedEditedAndClaimedOverHTTP(t *testing.T) {
	e := newKeysEnv(t)
	org := "/admin/v1/orgs/" + e.org.ID.String() + "/vendors"
	status, raw := e.call("POST", org, e.member, map[string]any{"store_id": e.store.ID, "name": "Clay Supply", "notes": "Net 30"})
	v := decode[map[string]any](t, raw)
	if status != http.StatusCreated || v["name"] != "Clay Supply" || v["notes"] != "Net 30" || v["claimed_at"] != nil {
		t.Fatalf("create: %d %s", status, raw)
	}
	id := v["id"].(string)
	if status, raw := e.call("PATCH", "/admin/v1/vendors/"+id, e.member, `{"phone": "+1 555", "notes": null, "ignored": 1}`); status != http.StatusOK ||
		decode[map[string]any](t, raw)["notes"] != nil {
		t.Fatalf("edit: %d %s", status, raw)
	}
	if status, _ := e.call("PATCH", "/admin/v1/vendors/"+id, e.member, `{}`); status != http.StatusOK {
		t.Fatalf("empty edit: %d", status)
	}
	if got := strings.Join(e.eventTypes(), ","); got != "vendor.created,vendor.updated" {
		t.Fatalf("events %s", got)
	}

	before := e.rowCounts()
	for _, r := range []struct {
		method, path, token string
		body                any
		status              int
		code                string
	}{
		{"POST", org, e.member, `{"store_id": "` + e.store.ID.String() + `"}`, 422, "validation_failed"},
		{"POST", org, e.member, `{"store_id": "` + e.store.ID.String() + `", "name": 5}`, 422, "validation_failed"},
		{"POST", org, e.member, map[string]any{"store_id": e.store.ID, "name": strings.Repeat("n", 201)}, 422, "validation_failed"},
		{"POST", org, e.member, map[string]any{"name": "x"}, 422, "validation_failed"},
		{"POST", org, e.outsider(), map[string]any{"store_id": e.store.ID, "name": "x"}, 404, "not_found"},
		{"PATCH", "/admin/v1/vendors/" + id, e.member, `{"name": null}`, 422, "validation_failed"},
		{"PATCH", "/admin/v1/vendors/" + id, e.member, `{"phone": ["1"]}`, 422, "validation_failed"},
		{"PATCH", "/admin/v1/vendors/" + id, e.outsider(), `{"phone": "1"}`, 404, "not_found"},
		{"PATCH", "/admin/v1/vendors/nope", e.member, `{"phone": "1"}`, 404, "not_found"},
		{"POST", "/admin/v1/vendors/" + id + "/claim-token", e.member, nil, 403, "forbidden"},
		{"POST", "/admin/v1/vendors/" + id + "/claim-token", e.outsider(), nil, 404, "not_found"},
	} {
		status, raw := e.call(r.method, r.path, r.token, r.body)
		if status != r.status || decode[map[string]any](t, raw)["error"] != r.code {
			t.Errorf("%s %s %v: %d %s, want %d %s", r.method, r.path, r.body, status, raw, r.status, r.code)
		}
	}
	if after := e.rowCounts(); after != before {
		t.Fatalf("refusals wrote rows: %s -> %s", before, after)
	}

	status, raw = e.call("POST", "/admin/v1/vendors/"+id+"/claim-token", e.owner, nil)
	tok := decode[map[string]any](t, raw)
	token, _ := tok["token"].(string)
	if status != http.StatusCreated || !strings.HasPrefix(token, "vct_") || tok["expires_at"] == nil {
		t.Fatalf("claim token: %d %s", status, raw)
	}
	claim := func(body any) (int, map[string]any) {
		status, raw := e.public("POST", "/v1/vendor-claims", body)
		return status, decode[map[string]any](t, raw)
	}
	if status, out := claim(map[string]any{"token": token, "email": "nope"}); status != 422 || out["error"] != "validation_failed" {
		t.Fatalf("bad email: %d %v", status, out)
	}
	if status, out := claim(map[string]any{"token": token, "email": "owner@clay.test", "name": "Clay Supply Co."}); status != 200 || out["vendor_id"] != id {
		t.Fatalf("claim: %d %v", status, out)
	}
	if status, out := claim(map[string]any{"token": token, "email": "owner@clay.test"}); status != 400 || out["error"] != "invalid_claim_token" {
		t.Fatalf("claim again: %d %v", status, out)
	}
	if got := strings.Join(e.eventTypes(), ","); got != "vendor.created,vendor.updated,vendor.claimed" {
		t.Fatalf("events %s", got)
	}
	if strings.Contains(e.logs.String(), token[4:]) {
		t.Fatal("the claim token reached a log line")
	}
	// Ten attempts a minute from one address (three made above), then 429.
	for i := 4; i <= 10; i++ {
		if status, out := claim(map[string]any{"token": "vct_nope", "email": "a@b.test"}); status != 400 {
			t.Fatalf("attempt %d: %d %v", i, status, out)
		}
	}
	if status, out := claim(map[string]any{"token": "vct_nope", "email": "a@b.test"}); status != 429 || out["error"] != "rate_limited" {
		t.Fatalf("the eleventh attempt: %d %v", status, out)
	}
}

// public makes a request without a key to a Read API path and checks the answer against the Read
// API's document.
func (e *keysEnv) public(method, path string, body any) (int, []byte) {
	e.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(raw))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	openapitest.Check(e.t, req, res.StatusCode, res.Header, out)
	return res.StatusCode, out
}
