package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/api/console"
	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/internal/endpoints"
	"wds/internal/eventsearch"
	"wds/internal/platform/secrets"
	"wds/internal/recovery"
	"wds/internal/resend"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
	"wds/test/pgtest"
)

// hostileEnv is one org with one of every resource, behind the whole router (the three APIs and the
// console), and a credential for each part.
type hostileEnv struct {
	t       *testing.T
	db      *gorm.DB
	srv     *httptest.Server
	routes  []string // "METHOD /path/:param"
	ids     map[string]string
	readKey string
	intKey  string
	token   string
	browser *http.Client // signed in to the console
	csrf    string
}

func newHostileEnv(t *testing.T) *hostileEnv {
	t.Helper()
	db := pgtest.New(t)
	ctx := context.Background()
	box, _ := secrets.NewBox(secrets.GenerateKey())
	org, store, _ := mustOrg(t, db, "Hostile")
	owner, token, err := workspace.NewService(db).CreateUser(ctx, org.ID, "owner@hostile.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	member, _, err := workspace.NewService(db).CreateUser(ctx, org.ID, "member@hostile.test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	hooks := endpoints.NewService(db, box, endpoints.Options{AllowPrivate: true})
	d := apitest.Domain(db, box, nil)
	r, err := api.NewRouter(api.Deps{Services: api.NewServices(db, d), Log: log, Webhooks: hooks, Resends: resend.NewService(db, nil), Dispatches: &startedDispatches{}})
	if err != nil {
		t.Fatal(err)
	}
	(&console.Console{DB: db, Log: log, Members: d.People, Sessions: d.People, Keys: d.Keys, KeyLists: d.KeyLists, Audit: d.Audit, Deliveries: d.Deliveries, Events: eventsearch.NewService(db, box, nil), Resends: resend.NewService(db, nil),
		Shipping: d.Shipping, Vendors: d.Vendors, Clients: d.Orders,
		Webhooks: hooks, Recoveries: recovery.NewService(db, nil, 0), InsecureCookie: true}).Register(r)
	e := &hostileEnv{t: t, db: db, srv: httptest.NewServer(r), token: token, ids: map[string]string{"orgs": org.ID.String()}}
	t.Cleanup(e.srv.Close)
	for _, rt := range r.Routes() {
		e.routes = append(e.routes, rt.Method+" "+rt.Path)
	}
	sort.Strings(e.routes)
	e.readKey = mustReadKey(t, db, org.ID, owner.ID, models.ScopeReadWrite, nil)
	ik, err := apikeys.NewService(db, box).CreateIntegrationKey(ctx, apikeys.NewIntegrationKey{OrgID: org.ID, StoreID: store.ID,
		ActorID: owner.ID, Scopes: models.IntegrationScopes, RateLimit: apikeys.MaxRateLimit})
	if err != nil {
		t.Fatal(err)
	}
	e.intKey = ik.Plaintext
	e.resources(org.ID, store.ID, owner.ID, member.ID)
	e.signIn()
	return e
}

// resources makes the ids path parameters take: each route acts on a real resource of the org, and
// the ones that revoke or delete act on spares, so the credentials the sweep uses stay valid.
func (e *hostileEnv) resources(org, store, owner, member uuid.UUID) {
	t := e.t
	order := e.call(http.MethodPost, "/integrations/v1/orders", "Bearer "+e.intKey, "application/json", []byte(`{"external_id":"ext-1",
		"currency":"USD","lines":[{"description":"Mug","quantity":1,"unit_price_cents":1000}],
		"payment":{"external_id":"pay-1","amount_cents":500,"method":"card"}}`), nil)
	var created struct{ ID string }
	if err := json.Unmarshal(order.body, &created); err != nil || created.ID == "" {
		t.Fatalf("create order: %d %s", order.status, order.body)
	}
	ship := e.call(http.MethodPost, "/admin/v1/orders/"+created.ID+"/shipments", "Bearer "+e.token, "application/json",
		[]byte(`{"carrier":"UPS","tracking_number":"1Z"}`), nil)
	var shipment struct{ ID string }
	if err := json.Unmarshal(ship.body, &shipment); err != nil || shipment.ID == "" {
		t.Fatalf("ship: %d %s", ship.status, ship.body)
	}
	vendor := mustVendor(t, e.db, org, store, "Clay Co")
	spareRead, _ := mustReadKeyWithID(t, e.db, org, owner, models.ScopeReadOnly, nil)
	spareInt, err := apikeys.NewService(e.db, nil).CreateIntegrationKey(context.Background(), apikeys.NewIntegrationKey{OrgID: org,
		StoreID: store, ActorID: owner, Scopes: []string{models.ScopeOrdersWrite}})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := endpoints.NewService(e.db, mustBox(t), endpoints.Options{AllowPrivate: true}).Create(context.Background(),
		endpoints.CreateInput{OrgID: org, ActorID: owner, URL: "https://127.0.0.1/hook", EventTypes: []string{"order.created"}})
	if err != nil {
		t.Fatal(err)
	}
	var evID string
	e.db.Raw("SELECT id::text FROM events LIMIT 1").Scan(&evID)
	ev := uuid.MustParse(evID)
	delivery := models.Delivery{ID: uuid.New(), OrgID: org, EventID: ev, EndpointID: ep.Endpoint.ID, EventType: "order.created",
		ChainID: uuid.New(), WorkflowID: "webhook-event/" + ev.String(), Attempt: 1, Status: models.StatusDropped, AttemptedAt: time.Now()}
	if err := e.db.Create(&delivery).Error; err != nil {
		t.Fatal(err)
	}
	var payment, client string
	e.db.Raw("SELECT id::text FROM payments LIMIT 1").Scan(&payment)
	e.db.Raw("SELECT id::text FROM clients LIMIT 1").Scan(&client)
	for seg, id := range map[string]string{"orders": created.ID, "shipments": shipment.ID, "vendors": vendor.ID.String(),
		"clients": client, "payments": payment, "read-keys": spareRead.String(), "keys": spareRead.String(),
		"integration-keys": spareInt.Key.ID.String(), "connectors": spareInt.Key.ID.String(), "users": member.String(),
		"webhooks": ep.Endpoint.ID.String(), "deliveries": delivery.ID.String(), "by-external": "ext-1"} {
		e.ids[seg] = id
	}
}

func mustBox(t *testing.T) *secrets.Box {
	box, err := secrets.NewBox(secrets.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// signIn opens a console session and reads its CSRF token from a form.
func (e *hostileEnv) signIn() {
	jar, _ := cookiejar.New(nil)
	e.browser = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form, err := e.browser.Get(e.srv.URL + "/console/login") // the form's token, bound to its pre-session cookie
	if err != nil {
		e.t.Fatal(err)
	}
	formPage, _ := io.ReadAll(form.Body)
	form.Body.Close()
	token := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(formPage)
	if token == nil {
		e.t.Fatalf("no token on the sign-in form: %s", formPage)
	}
	resp, err := e.browser.PostForm(e.srv.URL+"/console/login", url.Values{"token": {e.token}, "csrf": {string(token[1])}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("console sign-in: %v %v", resp, err)
	}
	resp.Body.Close()
	page := e.call(http.MethodGet, "/console/keys", "", "", nil, nil)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page.body)
	if m == nil {
		e.t.Fatalf("no CSRF token on the keys page: %s", page.body)
	}
	e.csrf = string(m[1])
}

// call sends one request with the credential given (or, for the console, the session).
func (e *hostileEnv) call(method, path, auth, contentType string, body []byte, header http.Header) answer {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	c := openapitest.Client(e.t, nil)
	if strings.HasPrefix(path, "/console") {
		c = e.browser
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: b, header: resp.Header}
}

// fingerprint is a digest of every table a request could write, except those every request may
// touch by design (rate-limit buckets, idempotency records, console sessions).
func (e *hostileEnv) fingerprint() string {
	var tables []string
	e.db.Raw(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'
		AND tablename NOT IN ('rate_limit_hits', 'idempotency_keys', 'console_sessions', 'goose_db_version')
		ORDER BY tablename`).Scan(&tables)
	parts := make([]string, len(tables))
	for i, tbl := range tables {
		parts[i] = fmt.Sprintf("SELECT %s::text, md5(coalesce(string_agg(md5(t::text), '' ORDER BY md5(t::text)), ''))"+
			" FROM %s t", pgQuote(tbl), tbl)
	}
	var rows []struct{ Text, Md5 string }
	e.db.Raw(strings.Join(parts, " UNION ALL ")).Scan(&rows)
	b, _ := json.Marshal(rows)
	return string(b)
}

func pgQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// hostile is one kind of bad input: what it does to a route's path, query, headers and body.
type hostile struct {
	name   string
	param  string            // the value of every path parameter; empty keeps the real id
	query  string            // appended to the path
	header map[string]string // extra headers
	body   []byte
}

func hostileInputs() []hostile {
	deepObject := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	atCap := append([]byte(`{"notes":"`), bytes.Repeat([]byte("x"), 1<<20-len(`{"notes":""}`))...)
	atCap = append(atCap, `"}`...)
	pastCap := append([]byte(`{"notes":"`), bytes.Repeat([]byte("x"), 1<<20)...)
	pastCap = append(pastCap, `"}`...)
	return []hostile{
		{name: "deep object", body: []byte(deepObject)},
		{name: "deep array", body: []byte(strings.Repeat("[", 100000))},
		{name: "numbers past int64", body: []byte(`{"quantity":1e400,"amount_cents":99999999999999999999999,
			"unit_price_cents":-1e309,"max_attempts":18446744073709551616,"rate_limit":1e19,"p_max_attempts":1e400,
			"lines":[{"quantity":99999999999999999999,"unit_price_cents":1}]}`)},
		{name: "invalid UTF-8", body: []byte("{\"external_id\":\"\xff\xfe\",\"name\":\"\xc3\x28\",\"email\":\"a\xed\xa0\x80@b.c\"," +
			"\"p_url\":\"https://\xff/\",\"lines\":[{\"description\":\"\xf8\",\"quantity\":1,\"unit_price_cents\":1}]}")},
		{name: "body at the cap", body: atCap},
		{name: "body past the cap", body: pastCap},
		{name: "wrong types", body: []byte(`{"external_id":[],"lines":"x","name":{},"p_event_types":"order.created",
			"p_id":5,"email":false,"carrier":null,"scopes":{"a":1},"expires_at":"yesterday","tags":[[[]]]}`)},
		{name: "not an object", body: []byte(`"just a string"`)},
		{name: "empty", body: nil},
		{name: "NUL bytes", body: []byte("{\"name\":\"a\\u0000b\",\"notes\":\"\\u0000\",\"tracking_number\":\"\\u0000\"}")},
		{name: "spoofed X-Forwarded-For", body: []byte(`{}`),
			header: map[string]string{"X-Forwarded-For": "127.0.0.1, 10.0.0.1", "X-Real-Ip": "127.0.0.1", "Forwarded": "for=127.0.0.1"}},
		{name: "hostile query", query: "?limit=-1&limit=99999999999999999999&cursor=%ff%fe%00&created_after=notadate&status=%3Cscript%3E&" +
			"x=" + strings.Repeat("a", 4000)},
		{name: "NUL id", param: "%00"},
		{name: "traversal id", param: "..%2F..%2Fetc%2Fpasswd"},
		{name: "long id", param: strings.Repeat("a", 5000)},
		{name: "nil uuid", param: "00000000-0000-0000-0000-000000000000"},
		{name: "injection id", param: "1'%20OR%20'1'='1"},
	}
}

var pathParam = regexp.MustCompile(`[:*]([a-z_]+)`)

// path fills the route's parameters: the real id of the resource named by the segment before each,
// or the hostile value.
func (e *hostileEnv) path(route string, h hostile) string {
	segs := strings.Split(route, "/")
	for i, s := range segs {
		m := pathParam.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		switch {
		case h.param != "":
			segs[i] = h.param
		case m[1] == "action":
			segs[i] = "disable"
		case m[1] == "operation":
			segs[i] = "outbound_webhook_create"
		case m[1] == "org_id":
			segs[i] = e.ids["orgs"]
		default:
			segs[i] = e.ids[segs[i-1]]
		}
	}
	return strings.Join(segs, "/")
}

// consoleForm turns a hostile body into the console's form fields: every field name its forms use,
// each holding the body's text.
func consoleForm(t *testing.T, body []byte, csrf string) []byte {
	names, err := filepath.Glob("console/templates/*.html")
	if err != nil || len(names) == 0 {
		t.Fatalf("console templates: %v", err)
	}
	form := url.Values{"csrf": {csrf}}
	for _, n := range names {
		b, _ := os.ReadFile(n)
		for _, m := range regexp.MustCompile(`name="([a-z_]+)"`).FindAllSubmatch(b, -1) {
			if string(m[1]) != "csrf" {
				form.Set(string(m[1]), string(body))
			}
		}
	}
	return []byte(form.Encode())
}

// TestEveryRouteAnswersHostileInputClearly drives every route of the router with hostile paths,
// queries, headers and bodies, as the credential it needs. Every answer must be below 500, an error
// must have the error shape (the console answers HTML pages), and a rejected request must leave
// every table as it was.
func TestEveryRouteAnswersHostileInputClearly(t *testing.T) {
	e := newHostileEnv(t)
	shape := regexp.MustCompile(`^\{"error":"[a-z_]+","detail":"[^"]*`)
	for _, route := range e.routes {
		method, pattern, _ := strings.Cut(route, " ")
		for _, h := range hostileInputs() {
			if h.param != "" && !pathParam.MatchString(pattern) {
				continue
			}
			path := e.path(pattern, h) + h.query
			auth, ctype, body := e.credential(path), "application/json", h.body
			if strings.HasPrefix(path, "/console") {
				ctype, body = "application/x-www-form-urlencoded", consoleForm(t, h.body, e.csrf)
			}
			if method == http.MethodGet {
				body = nil
			}
			header := http.Header{}
			for k, v := range h.header {
				header.Set(k, v)
			}
			before := e.fingerprint()
			a := e.call(method, path, auth, ctype, body, header)
			where := fmt.Sprintf("%s %s with %s", method, pattern, h.name)
			if a.status >= 500 {
				t.Errorf("%s: %d %.300s", where, a.status, a.body)
			}
			if a.status >= 400 && !strings.HasPrefix(path, "/console") && !shape.Match(a.body) {
				t.Errorf("%s: %d not in the error shape: %.300s", where, a.status, a.body)
			}
			if a.status >= 400 && e.fingerprint() != before {
				t.Errorf("%s: rejected with %d but wrote to the database", where, a.status)
			}
		}
	}
}

// credential is the Authorization the route's API takes; the console uses its session.
func (e *hostileEnv) credential(path string) string {
	switch {
	case strings.HasPrefix(path, "/integrations/"):
		return "Bearer " + e.intKey
	case strings.HasPrefix(path, "/admin/"):
		return "Bearer " + e.token
	case strings.HasPrefix(path, "/v1/"):
		return "Bearer " + e.readKey
	}
	return ""
}
