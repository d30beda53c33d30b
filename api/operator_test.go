package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/api/openapi/openapitest"
	"wds/internal/deliverylog"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/eventsearch"
	"wds/internal/platform/secrets"
	"wds/internal/recovery"
	"wds/internal/resend"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
	"wds/test/deliverytest"
	"wds/test/pgtest"
	"wds/workflows/contract"
)

// opEnv serves the Operator API and the test event over real PostgreSQL.
type opEnv struct {
	t           testing.TB
	db          *gorm.DB
	box         *secrets.Box // seals the endpoints' secrets and headers
	srv         *httptest.Server
	org         *models.Org
	owner       *models.User
	ownerToken  string
	memberToken string
	started     *startedDispatches
}

type startedDispatches struct {
	mu  sync.Mutex
	ids []uuid.UUID
}

func (s *startedDispatches) StartDispatches(_ context.Context, ids ...uuid.UUID) {
	s.mu.Lock()
	s.ids = append(s.ids, ids...)
	s.mu.Unlock()
}

func newOpEnv(t testing.TB, allowPrivate bool) *opEnv {
	t.Helper()
	return newOpEnvWith(t, endpoints.Options{AllowPrivate: allowPrivate})
}

// newOpEnvWith serves the Operator API with a webhook service of opts, its resends started by the env.
func newOpEnvWith(t testing.TB, opts endpoints.Options) *opEnv {
	t.Helper()
	db := pgtest.New(t)
	e := &opEnv{t: t, db: db, started: &startedDispatches{}}
	e.org, _, e.owner = mustOrg(t, db, "Acme")
	var err error
	e.ownerToken = e.token(e.owner.ID)
	_, e.memberToken, err = workspace.NewService(db).CreateUser(context.Background(), e.org.ID, "member@acme.test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	box, _ := secrets.NewBox(secrets.GenerateKey())
	e.box = box
	log := logrus.New()
	log.SetOutput(io.Discard)
	hooks := endpoints.NewService(db, box, opts)
	services := apitest.Services(db, nil, nil)
	services.Deliveries = deliverylog.NewService(db, box, nil)
	r, err := api.NewRouter(api.Deps{Services: services, Log: log, Webhooks: hooks, Events: eventsearch.NewService(db, box, nil), Resends: resend.NewService(db, e.started),
		Recoveries: recovery.NewService(db, nil, 0), Dispatches: e.started})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(r)
	t.Cleanup(e.srv.Close)
	return e
}

// token gives an existing user a fresh operator token (the owner from mustOrg has one we never saw).
func (e *opEnv) token(user uuid.UUID) string {
	tok, hash, err := secrets.NewAPIKey(workspace.OperatorTokenPrefix)
	if err != nil {
		e.t.Fatal(err)
	}
	e.db.Model(&models.User{}).Where("id = ?", user).Update("token_hash", hash)
	return tok
}

func (e *opEnv) post(token, path string, body any) (int, map[string]any) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := openapitest.Client(e.t, nil).Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (e *opEnv) rpc(token, op string, params any) (int, map[string]any) {
	return e.post(token, "/admin/v1/rpc/"+op, params)
}

func (e *opEnv) create(url string) (int, map[string]any) {
	return e.rpc(e.ownerToken, "outbound_webhook_create", map[string]any{"p_url": url, "p_event_types": []string{"order.created"}})
}

func TestOperatorCreateAnswersWithTheSecretOnce(t *testing.T) {
	e := newOpEnv(t, true)
	status, ep := e.create("https://127.0.0.1:9/hook")
	if status != http.StatusCreated || !strings.HasPrefix(ep["secret"].(string), "whsec_") || ep["max_attempts"] != 5.0 || ep["enabled"] != true {
		t.Fatalf("%d %v", status, ep)
	}
	if _, ok := ep["secret_sealed"]; ok {
		t.Fatal("sealed secret exposed")
	}
	status, list := e.rpc(e.memberToken, "outbound_webhook_list", nil)
	rows := list["rows"].([]any)
	if status != http.StatusOK || len(rows) != 1 {
		t.Fatalf("member list %d %v", status, list)
	}
	if _, ok := rows[0].(map[string]any)["secret"]; ok {
		t.Fatal("list shows the secret")
	}
	status, rot := e.rpc(e.ownerToken, "core.rpc_outbound_webhook_rotate_secret", map[string]any{"p_id": ep["id"]})
	if status != http.StatusOK || rot["secret"] == ep["secret"] || !strings.HasPrefix(rot["secret"].(string), "whsec_") {
		t.Fatalf("rotate %d %v", status, rot)
	}
}

func TestOperatorRefusesBadURLs(t *testing.T) {
	strict := newOpEnv(t, false)
	for _, c := range []struct {
		url    string
		status int
		code   string
	}{
		{"http://example.com/hook", 422, "https_required"},
		{"https://127.0.0.1/hook", 422, "url_not_allowed"},
		{"https://localhost:8443/hook", 422, "url_not_allowed"},
		{"https://192.168.0.10/hook", 422, "url_not_allowed"},
		{"https://[::1]/hook", 422, "url_not_allowed"},
		{"not a url", 422, "validation_failed"},
	} {
		status, body := strict.create(c.url)
		if status != c.status || body["error"] != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.url, status, body, c.status, c.code)
		}
	}
	allowed := newOpEnv(t, true)
	if status, body := allowed.create("https://127.0.0.1/hook"); status != http.StatusCreated {
		t.Fatalf("loopback with allow-private: %d %v", status, body)
	}
	if status, body := allowed.create("http://127.0.0.1/hook"); status != 422 || body["error"] != "https_required" {
		t.Fatalf("http with allow-private: %d %v", status, body)
	}
}

func TestOperatorRefusesAnEleventhEnabledEndpoint(t *testing.T) {
	e := newOpEnv(t, true)
	var first string
	for i := range 10 {
		status, ep := e.create(fmt.Sprintf("https://127.0.0.1/%d", i))
		if status != http.StatusCreated {
			t.Fatalf("endpoint %d: %d %v", i+1, status, ep)
		}
		if i == 0 {
			first = ep["id"].(string)
		}
	}
	if status, body := e.create("https://127.0.0.1/11"); status != http.StatusConflict || body["error"] != "endpoint_limit_reached" {
		t.Fatalf("11th: %d %v", status, body)
	}
	if status, _ := e.rpc(e.ownerToken, "outbound_webhook_disable", map[string]any{"p_id": first}); status != 200 {
		t.Fatal("disable")
	}
	if status, _ := e.create("https://127.0.0.1/11"); status != http.StatusCreated {
		t.Fatal("room after disabling")
	}
	if status, body := e.rpc(e.ownerToken, "outbound_webhook_enable", map[string]any{"p_id": first}); status != http.StatusConflict || body["error"] != "endpoint_limit_reached" {
		t.Fatalf("enable past the limit: %d %v", status, body)
	}
}

func TestOperatorRolesAuthAndAuditWithoutSecrets(t *testing.T) {
	e := newOpEnv(t, true)
	if status, body := e.rpc(e.memberToken, "outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/", "p_event_types": []string{"order.created"}}); status != 403 || body["error"] != "forbidden" {
		t.Fatalf("member create: %d %v", status, body)
	}
	if status, body := e.rpc("", "outbound_webhook_list", nil); status != 401 || body["error"] != "missing_authorization" {
		t.Fatalf("no token: %d %v", status, body)
	}
	if status, body := e.rpc("wds_op_nope", "outbound_webhook_list", nil); status != 401 || body["error"] != "invalid_token" {
		t.Fatalf("bad token: %d %v", status, body)
	}
	_, ep := e.create("https://127.0.0.1/hook")
	id := ep["id"]
	for _, op := range []string{"outbound_webhook_disable", "outbound_webhook_enable", "outbound_webhook_rotate_secret", "outbound_webhook_delete"} {
		if status, body := e.rpc(e.memberToken, op, map[string]any{"p_id": id}); status != 403 {
			t.Fatalf("member %s: %d %v", op, status, body)
		}
		if status, body := e.rpc(e.ownerToken, op, map[string]any{"p_id": id}); status != 200 {
			t.Fatalf("owner %s: %d %v", op, status, body)
		}
	}
	var audit []models.AuditEntry
	e.db.Where("org_id = ?", e.org.ID).Order("created_at").Find(&audit)
	if len(audit) != 5 || audit[0].Action != "webhook_endpoint.create" || audit[0].ActorID != e.owner.ID || audit[0].Details["url"] != "https://127.0.0.1/hook" {
		t.Fatalf("audit %+v", audit)
	}
	raw, _ := json.Marshal(audit)
	if strings.Contains(string(raw), "whsec_") {
		t.Fatalf("audit holds a secret: %s", raw)
	}
}

func TestOperatorRejectsMalformedCalls(t *testing.T) {
	e := newOpEnv(t, true)
	cases := []struct {
		op     string
		body   any
		status int
		code   string
	}{
		{"outbound_webhook_list", "[1,2]", 400, "invalid_json"},
		{"outbound_webhook_list", "{", 400, "invalid_json"},
		{"outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/", "p_event_types": "order.created"}, 422, "validation_failed"},
		{"outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/"}, 422, "validation_failed"},
		{"outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/", "p_event_types": []string{"order.created"}, "p_max_attempts": 11}, 422, "validation_failed"},
		{"outbound_webhook_disable", map[string]any{}, 422, "validation_failed"},
		{"outbound_webhook_disable", map[string]any{"p_id": "nope"}, 422, "validation_failed"},
		{"outbound_webhook_disable", map[string]any{"p_id": uuid.NewString()}, 404, "not_found"},
		{"outbound_webhook_list_deliveries", map[string]any{"p_id": uuid.NewString(), "p_cursor_at": "2026-01-01T00:00:00Z"}, 400, "invalid_cursor"},
		{"outbound_webhook_list_deliveries", map[string]any{"p_id": uuid.NewString(), "p_limit": 0}, 400, "invalid_parameter"},
		{"outbound_webhook_explode", nil, 404, "not_found"},
	}
	for _, c := range cases {
		status, body := e.rpc(e.ownerToken, c.op, c.body)
		if status != c.status || body["error"] != c.code {
			t.Errorf("%s %v: %d %v, want %d %s", c.op, c.body, status, body, c.status, c.code)
		}
	}
	big := `{"p_url":"` + strings.Repeat("x", 1<<20) + `"}`
	if status, body := e.rpc(e.ownerToken, "outbound_webhook_create", big); status != 413 {
		t.Errorf("oversized body: %d %v", status, body)
	}
}

// A parameter of the wrong JSON type is answered 422 validation_failed naming it and saying what it
// takes: p_event_types given as one string says an array of event types is expected.
func TestOperatorSaysWhatAParameterOfTheWrongTypeTakes(t *testing.T) {
	e := newOpEnv(t, true)
	cases := []struct {
		op     string
		body   map[string]any
		detail []string
	}{
		{"outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/", "p_event_types": "order.created"},
			[]string{"p_event_types", "an array of event types", `["order.created"]`, "not a string"}},
		{"outbound_webhook_update", map[string]any{"p_id": uuid.NewString(), "p_event_types": "order.created,payment.recorded"},
			[]string{"p_event_types", "an array of event types"}},
		{"outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/", "p_event_types": []string{"order.created"}, "p_max_attempts": "3"},
			[]string{"p_max_attempts", "a whole number", "not a string"}},
		{"outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/", "p_event_types": []string{"order.created"}, "p_headers": []string{"X-A: b"}},
			[]string{"p_headers", "an object", "not an array"}},
	}
	for _, c := range cases {
		status, body := e.rpc(e.ownerToken, c.op, c.body)
		detail, _ := body["detail"].(string)
		if status != 422 || body["error"] != "validation_failed" {
			t.Errorf("%s %v: %d %v, want 422 validation_failed", c.op, c.body, status, body)
			continue
		}
		for _, want := range c.detail {
			if !strings.Contains(detail, want) {
				t.Errorf("%s %v: detail %q does not say %q", c.op, c.body, detail, want)
			}
		}
	}
}

func TestOperatorListsDeliveriesAndRefiresADroppedOne(t *testing.T) {
	e := newOpEnv(t, true)
	_, ep := e.create("https://127.0.0.1/hook")
	epID := uuid.MustParse(ep["id"].(string))
	ev, _ := deliverytest.Emit(context.Background(), e.db, e.org.ID, nil, events.OrderCreated, nil)
	chain := uuid.New()
	for a := 1; a <= 3; a++ {
		status := models.StatusFailed
		if a == 3 {
			status = models.StatusDropped
		}
		d := models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: ev, EndpointID: epID, EventType: "order.created", ChainID: chain,
			WorkflowID: contract.EventWorkflowID(ev), Attempt: a, Status: status, AttemptedAt: time.Now().Add(time.Duration(a) * time.Minute)}
		if err := e.db.Create(&d).Error; err != nil {
			t.Fatal(err)
		}
	}
	status, page := e.rpc(e.memberToken, "outbound_webhook_list_deliveries", map[string]any{"p_id": epID, "p_limit": 2})
	rows := page["rows"].([]any)
	if status != 200 || len(rows) != 2 || page["next_cursor"] == nil {
		t.Fatalf("page 1: %d %v", status, page)
	}
	newest := rows[0].(map[string]any)
	if newest["status"] != "dropped" || newest["attempt"] != 3.0 || newest["event_id"] != ev.String() {
		t.Fatalf("newest %v", newest)
	}
	cur := page["next_cursor"].(map[string]any)
	_, page2 := e.rpc(e.memberToken, "outbound_webhook_list_deliveries", map[string]any{"p_id": epID, "p_limit": 2, "p_cursor_at": cur["at"], "p_cursor_id": cur["id"]})
	if rows := page2["rows"].([]any); len(rows) != 1 || page2["next_cursor"] != nil || rows[0].(map[string]any)["attempt"] != 1.0 {
		t.Fatalf("page 2 %v", page2)
	}

	if status, body := e.post(e.memberToken, "/admin/v1/deliveries/"+newest["id"].(string)+"/refire", nil); status != 403 {
		t.Fatalf("member re-fire: %d %v", status, body)
	}
	if status, body := e.post(e.ownerToken, "/admin/v1/deliveries/"+rows[1].(map[string]any)["id"].(string)+"/refire", nil); status != 409 || body["error"] != "delivery_not_dropped" {
		t.Fatalf("re-fire of a failed delivery: %d %v", status, body)
	}
	status, out := e.post(e.ownerToken, "/admin/v1/deliveries/"+newest["id"].(string)+"/refire", nil)
	if status != 200 || out["workflow_id"] != contract.RefireWorkflowID(ev, epID, 1) || out["chain_id"] == chain.String() {
		t.Fatalf("re-fire: %d %v", status, out)
	}
	if len(e.started.ids) != 1 {
		t.Fatalf("re-fire not started after commit: %v", e.started.ids)
	}
	var audit models.AuditEntry
	e.db.Where("action = ?", "webhook_delivery.refire").Take(&audit)
	if audit.ActorID != e.owner.ID || audit.Details["workflow_id"] != out["workflow_id"] {
		t.Fatalf("re-fire audit %+v", audit)
	}

	// Both delivery lists name the re-fired row's new chain, and only on that row.
	_, byEndpoint := e.rpc(e.memberToken, "outbound_webhook_list_deliveries", map[string]any{"p_id": epID, "p_limit": 3})
	_, byOrg := e.call(http.MethodGet, "/admin/v1/orgs/"+e.org.ID.String()+"/deliveries?limit=3", e.memberToken, nil)
	for name, page := range map[string]map[string]any{"endpoint": byEndpoint, "org": byOrg} {
		rows, _ := page["rows"].([]any)
		if len(rows) != 3 {
			t.Fatalf("%s list after the re-fire: %v", name, page)
		}
		for _, r := range rows {
			row := r.(map[string]any)
			if row["id"] == newest["id"] {
				if row["refired_chain_id"] != out["chain_id"] || row["refired_workflow_id"] != out["workflow_id"] {
					t.Fatalf("%s list: the re-fired row %v does not name its new chain %v", name, row, out)
				}
			} else if _, ok := row["refired_chain_id"]; ok {
				t.Fatalf("%s list: a row never re-fired names a chain: %v", name, row)
			}
		}
	}
}

// A member is told they may not create an endpoint before anything about their input is checked:
// a URL that resolves to a private address must not answer url_not_allowed (and show the lookup).
func TestAMembersEndpointCreateIsForbiddenBeforeItsInputIsChecked(t *testing.T) {
	e := newOpEnv(t, false)
	for _, params := range []map[string]any{
		{"p_url": "https://127.0.0.1/hooks", "p_event_types": []string{"order.created"}},
		{"p_url": "http://example.com/hooks", "p_event_types": []string{"nope"}, "p_max_attempts": 99},
	} {
		status, out := e.rpc(e.memberToken, "outbound_webhook_create", params)
		if status != http.StatusForbidden || out["error"] != "forbidden" {
			t.Fatalf("member create %v: %d %v, want 403 forbidden", params, status, out)
		}
	}
}
