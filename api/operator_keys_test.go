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
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/api/openapi/openapitest"
	"wds/internal/platform/paging"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
	"wds/test/pgtest"
)

// keysEnv is one org with an owner, an admin and a member (each with an operator token), served by the
// real router with its log captured, every answer checked against the Operator API document.
type keysEnv struct {
	t                   *testing.T
	db                  *gorm.DB
	srv                 *httptest.Server
	logs                *syncBuffer
	org                 *models.Org
	store               *models.Store
	owner, member       string // operator tokens
	ownerID, memberID   uuid.UUID
	minted              []string // every secret the test has seen, to be looked for where it must not be
	otherOrg, otherUser uuid.UUID
}

func newKeysEnv(t *testing.T) *keysEnv {
	t.Helper()
	ctx := context.Background()
	e := &keysEnv{t: t, db: pgtest.New(t), logs: &syncBuffer{}}
	// mustOrg's owner has no token we know: make an owner and a member of our own.
	e.org, e.store, _ = mustOrg(t, e.db, "Operated")
	owner, ownerTok, err := workspace.NewService(e.db).CreateUser(ctx, e.org.ID, "op-owner@operated.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	member, memberTok, err := workspace.NewService(e.db).CreateUser(ctx, e.org.ID, "op-member@operated.test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	e.owner, e.ownerID, e.member, e.memberID = ownerTok, owner.ID, memberTok, member.ID
	e.minted = append(e.minted, ownerTok, memberTok)
	other, _, otherOwner := mustOrg(t, e.db, "Elsewhere")
	e.otherOrg, e.otherUser = other.ID, otherOwner.ID

	log := logrus.New()
	log.SetOutput(e.logs)
	log.SetFormatter(&logrus.JSONFormatter{})
	log.SetLevel(logrus.TraceLevel) // every line a misconfigured production log level could add
	box, _ := secrets.NewBox(secrets.GenerateKey())
	r, err := api.NewRouter(api.Deps{Services: apitest.Services(e.db, box, nil), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(r)
	t.Cleanup(e.srv.Close)
	return e
}

// call sends a request as token and checks the answer against the document.
func (e *keysEnv) call(method, path, token string, body any) (int, []byte) {
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
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	e.validate(req, res, out)
	return res.StatusCode, out
}

func (e *keysEnv) validate(req *http.Request, res *http.Response, body []byte) {
	e.t.Helper()
	openapitest.Check(e.t, req, res.StatusCode, res.Header, body)
}

func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return v
}

type listPage struct {
	Rows       []map[string]any `json:"rows"`
	NextCursor *paging.Cursor   `json:"next_cursor"`
}

// assertNoSecretLeaked looks for every secret minted in the test in the captured log and in every
// audit row of the database.
func (e *keysEnv) assertNoSecretLeaked() {
	e.t.Helper()
	var details []string
	if err := e.db.Raw("SELECT action || ' ' || coalesce(details::text, '') FROM audit_log").Scan(&details).Error; err != nil {
		e.t.Fatal(err)
	}
	if len(details) == 0 {
		e.t.Fatal("no audit rows: the scan would prove nothing")
	}
	logs := e.logs.String()
	if !strings.Contains(logs, `"msg":"request"`) {
		e.t.Fatal("no request lines were logged: the scan would prove nothing")
	}
	for _, s := range e.minted {
		if s == "" {
			e.t.Fatal("an empty secret was recorded")
		}
		if strings.Contains(logs, s) {
			e.t.Errorf("secret %.12s... is in the log", s)
		}
		for _, d := range details {
			if strings.Contains(d, s) {
				e.t.Errorf("secret %.12s... is in audit row %q", s, d)
			}
		}
	}
}

func TestOperatorReadKeysCreateListRevoke(t *testing.T) {
	e := newKeysEnv(t)
	base := "/admin/v1/orgs/" + e.org.ID.String() + "/read-keys"

	status, body := e.call("POST", base, e.owner, map[string]any{"scope": "read_write", "name": "reporting"})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	created := decode[map[string]any](t, body)
	key, id := created["key"].(string), created["id"].(string)
	e.minted = append(e.minted, key)
	if !strings.HasPrefix(key, "pck_live_") || created["scope"] != "read_write" || created["status"] != "active" {
		t.Fatalf("created %v", created)
	}
	if code, _ := callRead(t, e.srv.URL, "/v1/orders", key); code != http.StatusOK {
		t.Fatalf("the minted key does not authenticate: %d", code)
	}

	// Members list (without secrets); only owners and admins mint and revoke.
	status, body = e.call("GET", base, e.member, nil)
	page := decode[listPage](t, body)
	if status != http.StatusOK || len(page.Rows) != 1 || page.Rows[0]["id"] != id || strings.Contains(string(body), key) {
		t.Fatalf("member list: %d %s", status, body)
	}
	status, body = e.call("POST", base, e.member, map[string]any{})
	wantError(t, status, body, http.StatusForbidden, "forbidden")
	status, body = e.call("POST", "/admin/v1/read-keys/"+id+"/revoke", e.member, nil)
	wantError(t, status, body, http.StatusForbidden, "forbidden")
	// A user of another org learns nothing about this one: to them it does not exist.
	_, otherTok, err := workspace.NewService(e.db).CreateUser(context.Background(), e.otherOrg, "x@elsewhere.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	e.minted = append(e.minted, otherTok)
	status, body = e.call("GET", base, otherTok, nil)
	wantError(t, status, body, http.StatusNotFound, "not_found")

	status, body = e.call("POST", "/admin/v1/read-keys/"+id+"/revoke", e.owner, nil)
	if status != http.StatusOK || decode[map[string]any](t, body)["revoked_at"] == nil {
		t.Fatalf("revoke: %d %s", status, body)
	}
	if code, _ := callRead(t, e.srv.URL, "/v1/orders", key); code != http.StatusUnauthorized {
		t.Fatalf("revoked key still authenticates: %d", code)
	}
	_, body = e.call("GET", base, e.owner, nil)
	if got := decode[listPage](t, body).Rows[0]["status"]; got != "revoked" {
		t.Fatalf("status after revoke: %v", got)
	}
	status, body = e.call("POST", "/admin/v1/read-keys/"+uuid.NewString()+"/revoke", e.owner, nil)
	wantError(t, status, body, http.StatusNotFound, "not_found")
	e.assertNoSecretLeaked()
}

func TestOperatorIntegrationKeysCreateListRevoke(t *testing.T) {
	e := newKeysEnv(t)
	base := "/admin/v1/orgs/" + e.org.ID.String() + "/integration-keys"
	status, body := e.call("POST", base, e.owner, map[string]any{"store_id": e.store.ID, "scopes": []string{"orders:write"},
		"require_signature": true, "ip_allowlist": []string{"10.0.0.0/8"}, "rate_limit": 120, "label": "shop sync"})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	created := decode[map[string]any](t, body)
	key, secret, id := created["key"].(string), created["signing_secret"].(string), created["id"].(string)
	e.minted = append(e.minted, key, secret)
	if !strings.HasPrefix(key, "pck_int_") || !strings.HasPrefix(secret, "whsec_") || created["rate_limit"] != float64(120) {
		t.Fatalf("created %v", created)
	}
	status, body = e.call("GET", base, e.member, nil)
	page := decode[listPage](t, body)
	if status != http.StatusOK || len(page.Rows) != 1 || page.Rows[0]["id"] != id || page.Rows[0]["require_signature"] != true {
		t.Fatalf("member list: %d %s", status, body)
	}
	if strings.Contains(string(body), key) || strings.Contains(string(body), secret) {
		t.Fatal("the list shows a secret")
	}
	status, body = e.call("POST", base, e.member, map[string]any{"store_id": e.store.ID, "scopes": []string{"orders:write"}})
	wantError(t, status, body, http.StatusForbidden, "forbidden")
	status, body = e.call("POST", "/admin/v1/integration-keys/"+id+"/revoke", e.member, nil)
	wantError(t, status, body, http.StatusForbidden, "forbidden")
	status, body = e.call("POST", "/admin/v1/integration-keys/"+id+"/revoke", e.owner, nil)
	if status != http.StatusOK || decode[map[string]any](t, body)["id"] != id {
		t.Fatalf("revoke: %d %s", status, body)
	}
	_, body = e.call("GET", base, e.owner, nil)
	if got := decode[listPage](t, body).Rows[0]["status"]; got != "revoked" {
		t.Fatalf("status after revoke: %v", got)
	}
	e.assertNoSecretLeaked()
}

func TestOperatorBadRequests(t *testing.T) {
	e := newKeysEnv(t)
	org := "/admin/v1/orgs/" + e.org.ID.String()
	cases := []struct {
		method, path, token string
		body                any
		status              int
		code                string
	}{
		{"GET", org + "/read-keys", "", nil, 401, "missing_authorization"},
		{"GET", org + "/read-keys", "not-a-token", nil, 401, "invalid_token"},
		{"GET", "/admin/v1/orgs/not-a-uuid/read-keys", e.owner, nil, 404, "not_found"},
		{"POST", org + "/read-keys", e.owner, "[1]", 400, "invalid_json"},
		{"POST", org + "/read-keys", e.owner, `{"scope": 5}`, 422, "validation_failed"},
		{"POST", org + "/read-keys", e.owner, `{"scope": "everything"}`, 422, "validation_failed"},
		{"POST", org + "/read-keys", e.owner, `{"expires_at": "tomorrow"}`, 422, "validation_failed"},
		{"POST", org + "/read-keys", e.owner, `{"name": "a\u0000b"}`, 422, "validation_failed"},
		{"POST", org + "/read-keys", e.owner, `{"name": "` + strings.Repeat("x", 1<<20) + `"}`, 413, "payload_too_large"},
		{"POST", org + "/integration-keys", e.owner, `{"scopes": ["orders:write"]}`, 422, "validation_failed"},
		{"POST", org + "/integration-keys", e.owner, `{"store_id": "nope", "scopes": ["orders:write"]}`, 422, "validation_failed"},
		{"POST", org + "/integration-keys", e.owner, `{"store_id": "` + e.store.ID.String() + `", "scopes": []}`, 422, "validation_failed"},
		{"POST", org + "/integration-keys", e.owner, `{"store_id": "` + e.store.ID.String() + `"}`, 422, "validation_failed"},
		{"POST", org + "/integration-keys", e.member, `{"store_id": "nope", "scopes": []}`, 403, "forbidden"},
		{"POST", org + "/read-keys", e.member, `{"scope": "everything"}`, 403, "forbidden"},
		{"GET", org + "/read-keys?limit=0", e.owner, nil, 400, "invalid_parameter"},
		{"GET", org + "/audit-log?cursor_at=2026-01-01T00:00:00Z", e.owner, nil, 400, "invalid_cursor"},
		{"GET", org + "/deliveries?status=pending", e.owner, nil, 400, "invalid_parameter"},
		{"GET", org + "/deliveries?endpoint_id=7", e.owner, nil, 400, "invalid_parameter"},
		{"GET", org + "/deliveries?since=yesterday", e.owner, nil, 400, "invalid_parameter"},
		{"POST", "/admin/v1/read-keys/not-a-uuid/revoke", e.owner, nil, 404, "not_found"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %s %d", c.method, c.path, c.status), func(t *testing.T) {
			status, body := e.call(c.method, c.path, c.token, c.body)
			wantError(t, status, body, c.status, c.code)
		})
	}
}

func TestOperatorAuditLogPagesNewestFirst(t *testing.T) {
	e := newKeysEnv(t)
	org := "/admin/v1/orgs/" + e.org.ID.String()
	for i := range 3 {
		_, body := e.call("POST", org+"/read-keys", e.owner, map[string]any{"name": fmt.Sprint("k", i)})
		k := decode[map[string]any](t, body)
		e.minted = append(e.minted, k["key"].(string))
		e.call("POST", "/admin/v1/read-keys/"+k["id"].(string)+"/revoke", e.owner, nil)
	}
	var n int64
	e.db.Raw("SELECT count(*) FROM audit_log WHERE org_id = ?", e.org.ID).Scan(&n)

	var actions []string
	seen := map[string]bool{}
	path := org + "/audit-log?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > int(n) {
			t.Fatal("paging does not end")
		}
		status, body := e.call("GET", path, e.owner, nil)
		if status != http.StatusOK {
			t.Fatalf("audit page: %d %s", status, body)
		}
		p := decode[listPage](t, body)
		for _, r := range p.Rows {
			if seen[r["id"].(string)] {
				t.Fatalf("row %v repeated", r["id"])
			}
			seen[r["id"].(string)] = true
			actions = append(actions, r["action"].(string))
		}
		path = ""
		if p.NextCursor != nil {
			path = org + "/audit-log?limit=2&cursor_at=" + p.NextCursor.At.Format(time.RFC3339Nano) + "&cursor_id=" + p.NextCursor.ID.String()
			path = strings.ReplaceAll(path, "+", "%2B")
		}
	}
	if int64(len(actions)) != n || n < 6 {
		t.Fatalf("walked %d rows of %d", len(actions), n)
	}
	if actions[0] != "read_key.revoke" || actions[len(actions)-1] != "read_key.create" {
		t.Errorf("not newest first: %v", actions)
	}
	status, body := e.call("GET", org+"/audit-log", e.member, nil)
	wantError(t, status, body, http.StatusForbidden, "forbidden")
	e.assertNoSecretLeaked()
}

func TestOperatorDeliveriesAcrossTheOrgWithFilters(t *testing.T) {
	e := newKeysEnv(t)
	epA, epB := e.endpointRow(e.org.ID), e.endpointRow(e.org.ID)
	foreign := e.endpointRow(e.otherOrg)
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	// Six attempts in this org over six minutes, and one in another org that must never show.
	e.deliveryRow(e.org.ID, epA, "order.created", "succeeded", t0)
	e.deliveryRow(e.org.ID, epA, "order.created", "failed", t0.Add(time.Minute))
	e.deliveryRow(e.org.ID, epB, "payment.recorded", "failed", t0.Add(2*time.Minute))
	e.deliveryRow(e.org.ID, epB, "payment.recorded", "dropped", t0.Add(3*time.Minute))
	e.deliveryRow(e.org.ID, epA, "payment.recorded", "succeeded", t0.Add(4*time.Minute))
	e.deliveryRow(e.org.ID, epB, "order.created", "succeeded", t0.Add(5*time.Minute))
	e.deliveryRow(e.otherOrg, foreign, "order.created", "succeeded", t0.Add(6*time.Minute))

	base := "/admin/v1/orgs/" + e.org.ID.String() + "/deliveries"
	ts := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	cases := []struct {
		query string
		want  int
	}{
		{"", 6},
		{"?endpoint_id=" + epA.String(), 3},
		{"?event_type=payment.recorded", 3},
		{"?status=failed", 2},
		{"?status=succeeded&endpoint_id=" + epB.String(), 1},
		{"?since=" + ts(2*time.Minute), 4},
		{"?since=" + ts(time.Minute) + "&until=" + ts(3*time.Minute), 2},
		{"?endpoint_id=" + foreign.String(), 0},
	}
	for _, c := range cases {
		status, body := e.call("GET", base+c.query, e.member, nil)
		p := decode[listPage](t, body)
		if status != http.StatusOK || len(p.Rows) != c.want {
			t.Errorf("%s: %d with %d rows, want %d", c.query, status, len(p.Rows), c.want)
		}
		for i := 1; i < len(p.Rows); i++ {
			if p.Rows[i-1]["attempted_at"].(string) < p.Rows[i]["attempted_at"].(string) {
				t.Errorf("%s: not newest first", c.query)
			}
		}
	}
	// Keyset paging walks all six, two at a time, each once.
	seen := map[string]bool{}
	path := base + "?limit=2"
	for path != "" {
		_, body := e.call("GET", path, e.owner, nil)
		p := decode[listPage](t, body)
		for _, r := range p.Rows {
			if seen[r["id"].(string)] {
				t.Fatalf("row repeated across pages")
			}
			seen[r["id"].(string)] = true
		}
		path = ""
		if p.NextCursor != nil {
			path = base + "?limit=2&cursor_at=" + strings.ReplaceAll(p.NextCursor.At.Format(time.RFC3339Nano), "+", "%2B") +
				"&cursor_id=" + p.NextCursor.ID.String()
		}
	}
	if len(seen) != 6 {
		t.Fatalf("paging walked %d rows, want 6", len(seen))
	}
}

// endpointRow inserts an endpoint directly: the listing reads rows, however they were made.
func (e *keysEnv) endpointRow(org uuid.UUID) uuid.UUID {
	e.t.Helper()
	id := uuid.New()
	creator := e.ownerID
	if org == e.otherOrg {
		creator = e.otherUser
	}
	err := e.db.Exec(`INSERT INTO webhook_endpoints (id, org_id, url, event_types, secret_sealed, created_by)
		VALUES (?, ?, 'https://receiver.example/hook', '{order.created}', '\x00', ?)`, id, org, creator).Error
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *keysEnv) deliveryRow(org, endpoint uuid.UUID, eventType, status string, at time.Time) {
	e.t.Helper()
	ev := uuid.New()
	if err := e.db.Exec(`INSERT INTO events (id, org_id, type, body) VALUES (?, ?, ?, '{}')`, ev, org, eventType).Error; err != nil {
		e.t.Fatal(err)
	}
	err := e.db.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id,
		attempt, status, attempted_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
		uuid.New(), org, ev, endpoint, eventType, uuid.New(), "webhook-event/"+ev.String(), status, at).Error
	if err != nil {
		e.t.Fatal(err)
	}
}

func TestOperatorOpenAPIDocumentIsValid303(t *testing.T) {
	e := newKeysEnv(t)
	status, body := e.call("GET", "/admin/v1/openapi.json", "", nil)
	if status != http.StatusOK {
		t.Fatalf("openapi.json: %d", status)
	}
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("document is not valid OpenAPI: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Fatalf("openapi %s, want 3.0.3", doc.OpenAPI)
	}
}

// callRead calls the Read API with a key, outside the Operator API document.
func callRead(t *testing.T, base, path, key string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := openapitest.Client(t, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}
