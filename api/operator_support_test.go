package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/uuid"

	"wds/api/openapi"
	"wds/models"
)

var (
	supportDocOnce sync.Once
	supportDoc     routers.Router
)

// call sends a request as token and checks the answer against the served Operator API document,
// and, for an endpoint answer of the webhook operations, against its Endpoint schema.
func (e *opEnv) call(method, path, token string, body any) (int, map[string]any) {
	e.t.Helper()
	supportDocOnce.Do(func() {
		d, err := openapi3.NewLoader().LoadFromData(openapi.OperatorJSON())
		if err == nil {
			supportDoc, _ = gorillamux.NewRouter(d)
		}
	})
	if supportDoc == nil {
		e.t.Fatal("operator API document does not load")
	}
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	route, params, err := supportDoc.FindRoute(req)
	if err != nil {
		e.t.Fatalf("%s %s is not in the Operator API document: %v", method, path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, ExcludeRequestBody: true}}
	if err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: res.StatusCode, Header: res.Header, Body: io.NopCloser(bytes.NewReader(raw)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}); err != nil {
		e.t.Errorf("%s %s: answer does not match the document: %v\n%s", method, path, err, raw)
	}
	var out map[string]any
	json.Unmarshal(raw, &out)
	if res.StatusCode < 300 && out["url"] != nil {
		schema := route.Spec.Components.Schemas["Endpoint"].Value
		var v any
		json.Unmarshal(raw, &v)
		if err := schema.VisitJSON(v); err != nil {
			e.t.Errorf("%s %s: endpoint does not match the Endpoint schema: %v\n%s", method, path, err, raw)
		}
	}
	return res.StatusCode, out
}

func TestOperatorEndpointRateLimitHeadersAndUpdate(t *testing.T) {
	e := newOpEnv(t, true)
	rpc := func(token, op string, p any) (int, map[string]any) {
		return e.call(http.MethodPost, "/admin/v1/rpc/"+op, token, p)
	}
	status, ep := rpc(e.ownerToken, "outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/hook",
		"p_event_types": []string{"order.created"}, "p_rate_limit": 20, "p_headers": map[string]string{"Authorization": "Bearer t"},
		"p_description": "Acme's order sync"})
	if status != http.StatusCreated || ep["rate_limit"] != 20.0 || ep["description"] != "Acme's order sync" || ep["headers"].(map[string]any)["Authorization"] != "Bearer t" ||
		ep["disabled_reason"] != nil || ep["health"] == nil {
		t.Fatalf("create %d %v", status, ep)
	}
	id := ep["id"]
	if status, body := rpc(e.ownerToken, "outbound_webhook_rotate_secret", map[string]any{"p_id": id, "p_grace_seconds": 700000}); status != http.StatusUnprocessableEntity ||
		body["detail"] != "the grace period must be from 0 to 7 days" {
		t.Fatalf("a grace too long %d %v", status, body)
	}
	if status, body := rpc(e.ownerToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_description": strings.Repeat("x", 201)}); status != http.StatusUnprocessableEntity ||
		body["error"] != "validation_failed" || !strings.Contains(body["detail"].(string), "at most 200 characters") {
		t.Fatalf("a long description %d %v", status, body)
	}
	if status, body := rpc(e.ownerToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_description": nil}); status != http.StatusOK || body["description"] != nil {
		t.Fatalf("description cleared %d %v", status, body)
	}
	status, up := rpc(e.ownerToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_rate_limit": nil,
		"p_headers": map[string]string{"X-Tenant": "acme"}, "p_event_types": []string{"order.created", "payment.recorded"}, "p_max_attempts": 3})
	if status != http.StatusOK || up["rate_limit"] != nil || up["max_attempts"] != 3.0 || len(up["event_types"].([]any)) != 2 ||
		up["headers"].(map[string]any)["X-Tenant"] != "acme" || up["headers"].(map[string]any)["Authorization"] != nil {
		t.Fatalf("update %d %v", status, up)
	}
	_, list := rpc(e.memberToken, "outbound_webhook_list", nil)
	row := list["rows"].([]any)[0].(map[string]any)
	if h := row["health"].(map[string]any); h["consecutive_dropped"] != 0.0 || h["unrecovered_dropped"] != 0.0 ||
		h["oldest_unrecovered_at"] != nil || row["rate_limit"] != nil {
		t.Fatalf("list row %v", row)
	}
	_, off := rpc(e.ownerToken, "outbound_webhook_disable", map[string]any{"p_id": id})
	if off["disabled_reason"] != "manual" {
		t.Fatalf("disable %v", off)
	}
	_, on := rpc(e.ownerToken, "outbound_webhook_enable", map[string]any{"p_id": id})
	if on["disabled_reason"] != nil {
		t.Fatalf("enable %v", on)
	}

	_, _, otherOwner := mustOrg(t, e.db, "Elsewhere")
	var foreign models.Endpoint
	if err := e.db.Where("id = ?", id).Take(&foreign).Error; err != nil {
		t.Fatal(err)
	}
	otherToken := e.token(otherOwner.ID)
	cases := []struct {
		name   string
		token  string
		op     string
		params map[string]any
		status int
		code   string
	}{
		{"refused header", e.ownerToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_headers": map[string]string{"X-PC-Signature": "x"}}, 422, "invalid_parameter"},
		{"host header", e.ownerToken, "outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/2", "p_event_types": []string{"order.created"}, "p_headers": map[string]string{"host": "x"}}, 422, "invalid_parameter"},
		{"control character in a header", e.ownerToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_headers": map[string]string{"X-Token": "a\x01b"}}, 422, "invalid_parameter"},
		{"DEL in a header", e.ownerToken, "outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/2", "p_event_types": []string{"order.created"}, "p_headers": map[string]string{"X-Token": "a\x7fb"}}, 422, "invalid_parameter"},
		{"header value type", e.ownerToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_headers": map[string]any{"X-A": 1}}, 422, "validation_failed"},
		{"rate limit 0", e.ownerToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_rate_limit": 0}, 422, "validation_failed"},
		{"rate limit 1001", e.ownerToken, "outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/2", "p_event_types": []string{"order.created"}, "p_rate_limit": 1001}, 422, "validation_failed"},
		{"rate limit text", e.ownerToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_rate_limit": "fast"}, 422, "validation_failed"},
		{"http url", e.ownerToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_url": "http://127.0.0.1/"}, 422, "https_required"},
		{"member", e.memberToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_rate_limit": 5}, 403, "forbidden"},
		{"unknown id", e.ownerToken, "outbound_webhook_update", map[string]any{"p_id": uuid.NewString(), "p_rate_limit": 5}, 404, "not_found"},
		{"other org", otherToken, "outbound_webhook_update", map[string]any{"p_id": id, "p_rate_limit": 5}, 404, "not_found"},
		{"no id", e.ownerToken, "outbound_webhook_update", map[string]any{"p_rate_limit": 5}, 422, "validation_failed"},
	}
	for _, c := range cases {
		status, body := rpc(c.token, c.op, c.params)
		if status != c.status || body["error"] != c.code || body["detail"] == "" {
			t.Errorf("%s: %d %v, want %d %s", c.name, status, body, c.status, c.code)
		}
		if h, _ := c.params["p_headers"].(map[string]string); h["X-Token"] != "" && !strings.Contains(fmt.Sprint(body["detail"]), "X-Token") {
			t.Errorf("%s: the detail %q does not name the header", c.name, body["detail"])
		}
	}
	var after models.Endpoint
	e.db.Where("id = ?", id).Take(&after)
	var n int64
	e.db.Model(&models.Endpoint{}).Count(&n)
	if after.RateLimit != nil || after.MaxAttempts != 3 || after.Headers["X-Tenant"] != "" || len(after.Headers) != 1 || !after.UpdatedAt.Equal(foreign.UpdatedAt) || n != 1 {
		t.Fatalf("refusals changed the database: %+v (%d endpoints)", after, n)
	}
	var audit []models.AuditEntry
	e.db.Where("action = ?", "webhook_endpoint.update").Find(&audit)
	raw, _ := json.Marshal(audit)
	if len(audit) != 2 || strings.Contains(string(raw), "acme") { // the description cleared, then the headers set
		t.Fatalf("update audit must name headers, never their values: %s", raw)
	}
}
