package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"wds/api/signing"
	"wds/internal/apikeys"
	"wds/models"
)

const minimalOrder = `{"external_id":"x","lines":[{"quantity":1,"unit_price_cents":100}]}`

func TestIntegrationHealthAndDocumentNeedNoKey(t *testing.T) {
	e := newIntEnv(t)
	r := e.get("/integrations/v1/health", intKey{})
	if r.status != http.StatusOK || string(r.body) != `{"ok":true}` {
		t.Fatalf("health %d %s", r.status, r.body)
	}
	r = e.get("/integrations/v1/openapi.json", intKey{})
	if r.status != http.StatusOK {
		t.Fatalf("openapi.json %d", r.status)
	}
	doc, err := openapi3.NewLoader().LoadFromData(r.body)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("document is not valid OpenAPI: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Fatalf("openapi %s", doc.OpenAPI)
	}
	for _, p := range []string{"/integrations/v1/health", "/integrations/v1/openapi.json", "/integrations/v1/orders",
		"/integrations/v1/orders/{id}/payments", "/integrations/v1/orders/{id}/cancel", "/integrations/v1/payments/{id}/refund",
		"/integrations/v1/clients", "/integrations/v1/webhook/nativestore", "/integrations/v1/orders/by-external/{external_id}"} {
		if doc.Paths.Find(p) == nil {
			t.Errorf("document lacks %s", p)
		}
	}
}

func TestIntegrationAuthenticationErrors(t *testing.T) {
	e := newIntEnv(t)
	past := e.clock.Now().Add(-time.Minute)
	expired := e.mint(apikeys.NewIntegrationKey{ExpiresAt: &past})
	revoked := e.mint(apikeys.NewIntegrationKey{})
	if _, err := apikeys.NewService(e.db, nil).RevokeIntegrationKey(context.Background(), revoked.ID, e.owner.ID); err != nil {
		t.Fatal(err)
	}
	readKey := mustReadKey(t, e.db, e.org.ID, e.owner.ID, "read_only", nil)
	cases := []struct {
		name, auth, code string
	}{
		{"no header", "", "missing_authorization"},
		{"not bearer", "Basic abc", "missing_authorization"},
		{"unknown key", "Bearer pck_int_nope", "invalid_api_key"},
		{"read key", "Bearer " + readKey, "invalid_api_key"},
		{"revoked", "Bearer " + revoked.token, "integration_key_revoked"},
		{"expired", "Bearer " + expired.token, "integration_key_expired"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.call(http.MethodPost, "/integrations/v1/orders", intKey{}, minimalOrder, map[string]string{"Authorization": tc.auth})
			r.want(t, http.StatusUnauthorized, tc.code)
		})
	}
	if n := e.count(`SELECT count(*) FROM orders`); n != 0 {
		t.Fatalf("%d orders written by rejected requests", n)
	}
}

func TestLastUsedIsRecorded(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	e.get("/integrations/v1/orders/by-external/none", k).want(t, http.StatusNotFound, "not_found")
	e.used.Flush(context.Background())
	if e.count(`SELECT count(*) FROM integration_keys WHERE id = ? AND last_used_at IS NOT NULL`, k.ID) != 1 {
		t.Fatal("last_used_at was not written")
	}
}

func TestScopesAndFormats(t *testing.T) {
	e := newIntEnv(t)
	// Keys are minted with at least one scope; one whose scopes were emptied since (by hand, in
	// the database) is still refused everywhere a scope is needed.
	none := e.mint(apikeys.NewIntegrationKey{Scopes: []string{"orders:write"}})
	e.db.Exec(`UPDATE integration_keys SET scopes = '{}' WHERE id = ?`, none.ID)
	id := uuid.NewString()
	for _, path := range []string{"/integrations/v1/orders", "/integrations/v1/orders/" + id + "/payments",
		"/integrations/v1/orders/" + id + "/cancel", "/integrations/v1/payments/" + id + "/refund", "/integrations/v1/clients"} {
		e.post(path, none, `{}`).want(t, http.StatusForbidden, "insufficient_scope")
	}
	// A key with no scope may still look orders up (no scope beyond a valid key).
	e.get("/integrations/v1/orders/by-external/x", none).want(t, http.StatusNotFound, "not_found")

	native := e.mint(apikeys.NewIntegrationKey{PayloadFormat: models.FormatNativestore})
	e.post("/integrations/v1/orders", native, minimalOrder).want(t, http.StatusBadRequest, "wrong_format")
	generic := e.mint(apikeys.NewIntegrationKey{})
	e.post("/integrations/v1/webhook/nativestore", generic, `{"id":1}`).want(t, http.StatusBadRequest, "wrong_format")
}

// TestSignatureRules covers every signature_* error of the error table for both formats.
func TestSignatureRules(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{RequireSignature: true})
	if !strings.HasPrefix(k.secret, "whsec_") {
		t.Fatalf("signing secret %q", k.secret)
	}
	now := e.clock.Now().Unix()
	sign := func(t int64, body string) string { return signing.SignPC([]byte(k.secret), t, []byte(body)) }
	cases := []struct {
		name, header, code string
	}{
		{"missing", "", "signature_missing"},
		{"malformed", "t=abc,v1=zz", "signature_malformed"},
		{"expired", sign(now-301, minimalOrder), "signature_expired"},
		{"future", sign(now+301, minimalOrder), "signature_expired"},
		{"other body", sign(now, minimalOrder+" "), "signature_invalid"},
		{"other secret", signing.SignPC([]byte("whsec_other"), now, []byte(minimalOrder)), "signature_invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.call(http.MethodPost, "/integrations/v1/orders", k, minimalOrder, map[string]string{"PC-Signature": tc.header})
			r.want(t, http.StatusUnauthorized, tc.code)
		})
	}
	e.call(http.MethodPost, "/integrations/v1/orders", k, minimalOrder,
		map[string]string{"PC-Signature": sign(now-299, minimalOrder)}).want(t, http.StatusCreated, "")
	// GETs are signed too, over the empty body.
	e.get("/integrations/v1/orders/by-external/x", k).want(t, http.StatusOK, "")
	e.call(http.MethodGet, "/integrations/v1/orders/by-external/x", k, "", map[string]string{"PC-Signature": ""}).
		want(t, http.StatusUnauthorized, "signature_missing")

	t.Run("unconfigured", func(t *testing.T) {
		e.db.Exec(`UPDATE integration_keys SET signing_secret_sealed = NULL WHERE id = ?`, k.ID)
		e.post("/integrations/v1/orders", k, minimalOrder).want(t, http.StatusUnauthorized, "signature_unconfigured")
	})
}

func TestNativestoreSignatureRules(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{PayloadFormat: models.FormatNativestore})
	if !k.RequireSignature || k.secret == "" {
		t.Fatal("a nativestore key must require signatures and get a secret")
	}
	body := `{"webhook_id":1}`
	good := signNative(k.secret, body)
	cases := []struct {
		name, header, code string
	}{
		{"missing", "", "signature_missing"},
		{"malformed", "not base64!", "signature_malformed"},
		{"wrong case", swapCase(good), "signature_invalid"},
		{"other body", signNative(k.secret, body+" "), "signature_invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.call(http.MethodPost, "/integrations/v1/webhook/nativestore", k, body, map[string]string{"X-Store-Webhook-Signature": tc.header}).
				want(t, http.StatusUnauthorized, tc.code)
		})
	}
	// A PC-Signature does not stand in for the platform's header.
	pc := signing.SignPC([]byte(k.secret), e.clock.Now().Unix(), []byte(body))
	e.call(http.MethodPost, "/integrations/v1/webhook/nativestore", k, body,
		map[string]string{"X-Store-Webhook-Signature": "", "PC-Signature": pc}).want(t, http.StatusUnauthorized, "signature_missing")
	r := e.post("/integrations/v1/webhook/nativestore", k, body).want(t, http.StatusOK, "")
	if r["ignored"] != true {
		t.Fatalf("signed ping %v", r)
	}
}

// swapCase flips the case of the first letter, keeping a valid base64 shape.
func swapCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 32
			return string(b)
		case c >= 'A' && c <= 'Z':
			b[i] = c + 32
			return string(b)
		}
	}
	return s
}

func TestIPAllowlist(t *testing.T) {
	e := newIntEnv(t, "127.0.0.1/32")
	k4 := e.mint(apikeys.NewIntegrationKey{IPAllowlist: []string{"203.0.113.0/24"}})
	k6 := e.mint(apikeys.NewIntegrationKey{IPAllowlist: []string{"2001:db8::/32"}})
	local := e.mint(apikeys.NewIntegrationKey{IPAllowlist: []string{"127.0.0.0/8", "::1"}})
	path := "/integrations/v1/orders/by-external/x"
	e.get(path, k4).want(t, http.StatusForbidden, "ip_not_allowed")
	e.get(path, local).want(t, http.StatusNotFound, "not_found")
	// The test client's peer is the trusted proxy 127.0.0.1, so X-Forwarded-For names the client.
	e.call(http.MethodGet, path, k4, "", map[string]string{"X-Forwarded-For": "203.0.113.7"}).want(t, http.StatusNotFound, "not_found")
	e.call(http.MethodGet, path, k4, "", map[string]string{"X-Forwarded-For": "198.51.100.1"}).want(t, http.StatusForbidden, "ip_not_allowed")
	e.call(http.MethodGet, path, k6, "", map[string]string{"X-Forwarded-For": "2001:db8::42"}).want(t, http.StatusNotFound, "not_found")
	e.call(http.MethodGet, path, k6, "", map[string]string{"X-Forwarded-For": "2001:db9::1"}).want(t, http.StatusForbidden, "ip_not_allowed")
}

func TestForwardedForIgnoredWithoutTrustedProxy(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{IPAllowlist: []string{"203.0.113.0/24"}})
	e.call(http.MethodGet, "/integrations/v1/orders/by-external/x", k, "", map[string]string{"X-Forwarded-For": "203.0.113.7"}).
		want(t, http.StatusForbidden, "ip_not_allowed")
}

func TestRateLimit(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{RateLimit: 3})
	other := e.mint(apikeys.NewIntegrationKey{RateLimit: 3})
	path := "/integrations/v1/orders/by-external/x"
	for range 3 {
		e.get(path, k).want(t, http.StatusNotFound, "not_found")
	}
	r := e.get(path, k)
	r.want(t, http.StatusTooManyRequests, "rate_limited")
	if r.header.Get("Retry-After") != "60" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	e.get(path, other).want(t, http.StatusNotFound, "not_found") // limits are per key
	e.clock.Add(2 * time.Minute)
	e.get(path, k).want(t, http.StatusNotFound, "not_found")
}

func TestBodyRules(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	big := `{"external_id":"big","pad":"` + strings.Repeat("a", 1<<20) + `"}`
	e.post("/integrations/v1/orders", k, big).want(t, http.StatusRequestEntityTooLarge, "payload_too_large")
	cases := []struct {
		body, status, code, field string
	}{
		{`not json`, "400", "invalid_json", ""},
		{`[1,2]`, "400", "invalid_json", ""},
		{`"str"`, "400", "invalid_json", ""},
		{`{"external_id":"a",`, "400", "invalid_json", ""},
		{``, "400", "invalid_json", ""},
		{`{"lines":[{"quantity":1}]}`, "422", "external_id_required", ""},
		{`{"external_id":"a"}`, "422", "lines_required", ""},
		{`{"external_id":"a","lines":[]}`, "422", "lines_required", ""},
		{`{"external_id":7,"lines":[{"quantity":1}]}`, "422", "validation_failed", "external_id"},
		{`{"external_id":"a","lines":[{"quantity":1},{"quantity":1},{"quantity":0}]}`, "422", "validation_failed", "lines[2].quantity"},
		{`{"external_id":"a","lines":[{"quantity":1},{"quantity":1.5}]}`, "422", "validation_failed", "lines[1].quantity"},
		{`{"external_id":"a","lines":[{"quantity":"2"}]}`, "422", "validation_failed", "lines[0].quantity"},
		{`{"external_id":"a","lines":[{"quantity":-1}]}`, "422", "validation_failed", "lines[0].quantity"},
		{`{"external_id":"a","lines":[{"quantity":1,"unit_price_cents":-5}]}`, "422", "validation_failed", "lines[0].unit_price_cents"},
		{`{"external_id":"a","lines":[{"quantity":1,"unit_price_cents":99999999999999999999}]}`, "422", "validation_failed", "lines[0].unit_price_cents"},
		{`{"external_id":"a","lines":[{"quantity":9223372036854775807,"unit_price_cents":2}]}`, "422", "validation_failed", "lines[0]"},
		{`{"external_id":"a","lines":[{"quantity":1}],"shipping_cents":-1}`, "422", "validation_failed", "shipping_cents"},
		{`{"external_id":"a","lines":[{"quantity":1}],"tax_cents":-1}`, "422", "validation_failed", "tax_cents"},
		{`{"external_id":"a","lines":[{"quantity":1}],"currency":"US"}`, "422", "validation_failed", "currency"},
		{`{"external_id":"a","lines":[{"quantity":1}],"currency":"U$D"}`, "422", "validation_failed", "currency"},
		{`{"external_id":"a","lines":[{"quantity":1}],"metadata":[1]}`, "422", "validation_failed", "metadata"},
		{`{"external_id":"a","lines":[{"quantity":1}],"client":{"tags":"vip"}}`, "422", "validation_failed", "client.tags"},
		{`{"external_id":"a","lines":[{"quantity":1}],"client":{"client_type":"alien"}}`, "422", "validation_failed", "client.client_type"},
		{`{"external_id":"a","lines":[{"quantity":1}],"payment":{"amount_cents":1,"method":"barter"}}`, "422", "validation_failed", "payment.method"},
		{`{"external_id":"a","lines":[{"quantity":1}],"payment":{"amount_cents":1,"paid_at":"yesterday"}}`, "422", "validation_failed", "payment.paid_at"},
		{`{"external_id":"a","lines":[{"quantity":1}],"payment":{"amount_cents":-1}}`, "422", "validation_failed", "payment.amount_cents"},
	}
	lines := func(n int) string {
		return `[` + strings.TrimSuffix(strings.Repeat(`{"quantity":1,"unit_price_cents":1},`, n), ",") + `]`
	}
	tags := func(n int) string { return `[` + strings.TrimSuffix(strings.Repeat(`"t",`, n), ",") + `]` }
	cases = append(cases,
		struct{ body, status, code, field string }{`{"external_id":"a","lines":` + lines(501) + `}`, "422", "validation_failed", "lines"},
		struct{ body, status, code, field string }{`{"external_id":"a","lines":[{"quantity":1}],"client":{"tags":` + tags(101) + `}}`, "422", "validation_failed", "client.tags"})
	for _, tc := range cases {
		r := e.post("/integrations/v1/orders", k, tc.body)
		status, _ := strconv.Atoi(tc.status)
		b := r.want(t, status, tc.code)
		if tc.field != "" && !strings.HasPrefix(b["detail"].(string), tc.field+":") {
			t.Errorf("%s: detail %q does not start with the field %s", tc.body, b["detail"], tc.field)
		}
	}
	if b := e.post("/integrations/v1/orders", k, `{"external_id":"a","lines":`+lines(501)+`}`).want(t, 422, "validation_failed"); b["detail"] != "lines: at most 500" {
		t.Errorf("501 lines: detail %q, want lines: at most 500", b["detail"])
	}
	// Unknown fields are ignored.
	e.post("/integrations/v1/orders", k, `{"external_id":"u","lines":[{"quantity":1,"colour":"red"}],"extra":{"a":1}}`).
		want(t, http.StatusCreated, "")
	if n := e.count(`SELECT count(*) FROM orders`) + e.count(`SELECT count(*) FROM events`) + e.count(`SELECT count(*) FROM external_refs`); n != 3 {
		t.Fatalf("rejected bodies left rows: %d rows in orders+events+external_refs, want 3", n)
	}
	// The limits themselves are allowed.
	e.post("/integrations/v1/orders", k, `{"external_id":"max","lines":`+lines(500)+`,"client":{"external_id":"c-max","tags":`+tags(100)+`}}`).
		want(t, http.StatusCreated, "")
}

func TestPathIDsThatAreNotUUIDsAre404(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	e.post("/integrations/v1/orders/nope/cancel", k, "").want(t, http.StatusNotFound, "not_found")
	e.post("/integrations/v1/orders/nope/payments", k, `{"external_id":"p","amount_cents":1}`).want(t, http.StatusNotFound, "not_found")
	e.post("/integrations/v1/payments/nope/refund", k, "").want(t, http.StatusNotFound, "not_found")
	e.post("/integrations/v1/orders/"+uuid.NewString()+"/payments", k, `{"external_id":"p","amount_cents":1}`).
		want(t, http.StatusNotFound, "not_found")
	if n := e.count(`SELECT count(*) FROM external_refs`); n != 0 {
		t.Fatal("a payment to an unknown order kept its external_id claim")
	}
}

// TestTextPostgreSQLCannotStore: NUL characters and invalid UTF-8 from bodies, headers and paths are
// refused as bad input, never a 500 from the database.
func TestTextPostgreSQLCannotStore(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	for _, b := range []string{`{"external_id":"a\u0000b","lines":[{"quantity":1}]}`,
		`{"external_id":"a","lines":[{"quantity":1,"metadata":{"x\u0000":"y"}}]}`} {
		e.post("/integrations/v1/orders", k, b).want(t, http.StatusUnprocessableEntity, "validation_failed")
	}
	// An escaped backslash followed by u0000 is ordinary text.
	e.post("/integrations/v1/orders", k, `{"external_id":"a\\u0000b","lines":[{"quantity":1}]}`).want(t, http.StatusCreated, "")
	e.call(http.MethodPost, "/integrations/v1/orders", k, minimalOrder, map[string]string{"Idempotency-Key": "\xff\xfe"}).
		want(t, http.StatusBadRequest, "invalid_idempotency_key")
	e.get("/integrations/v1/orders/by-external/%FF", k).want(t, http.StatusNotFound, "not_found")
	e.get("/integrations/v1/orders/by-external/a%00b", k).want(t, http.StatusNotFound, "not_found")
	native := e.mint(apikeys.NewIntegrationKey{PayloadFormat: models.FormatNativestore})
	e.post("/integrations/v1/webhook/nativestore", native, `{"id":1,"status":"pending","currency":"USD","number":"\u0000"}`).
		want(t, http.StatusUnprocessableEntity, "validation_failed")
}
