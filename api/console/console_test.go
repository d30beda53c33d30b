package console_test

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/api/console"
	"wds/internal/endpoints"
	"wds/internal/events/eventstest"
	"wds/internal/eventsearch"
	"wds/internal/ingest"
	"wds/internal/platform/secrets"
	"wds/internal/recovery"
	"wds/internal/resend"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type env struct {
	t                       *testing.T
	db                      *gorm.DB
	srv                     *httptest.Server
	org                     *models.Org
	ownerToken, memberToken string
}

// newEnv serves a console (and the APIs) over an org with an owner and a member; opts adjust the
// console before it is mounted.
func newEnv(t *testing.T, opts ...func(*console.Console)) *env {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	org, _ := workspace.NewService(db).CreateOrg(ctx, "Acme")
	if _, err := workspace.NewService(db).CreateStore(ctx, org.ID, "Main", "USD"); err != nil {
		t.Fatal(err)
	}
	_, owner, _ := workspace.NewService(db).CreateUser(ctx, org.ID, "o@acme.test", models.RoleOwner)
	_, member, _ := workspace.NewService(db).CreateUser(ctx, org.ID, "m@acme.test", models.RoleMember)
	log := logrus.New()
	log.SetOutput(io.Discard)
	box, _ := secrets.NewBox(secrets.GenerateKey())
	svc := endpoints.NewService(db, box, endpoints.Options{AllowPrivate: true})
	d := apitest.Domain(db, box, nil)
	resends := resend.NewService(db, nil)
	r, err := api.NewRouter(api.Deps{Services: api.NewServices(db, d), Log: log, Webhooks: svc, Resends: resends})
	if err != nil {
		t.Fatal(err)
	}
	con := &console.Console{DB: db, Log: log, Members: d.People, Sessions: d.People, Keys: d.Keys, KeyLists: d.KeyLists, Audit: d.Audit, Deliveries: d.Deliveries, Events: eventsearch.NewService(db, box, nil), Resends: resends,
		Shipping: d.Shipping, Vendors: d.Vendors, Clients: d.Orders,
		Webhooks: svc, Recoveries: recovery.NewService(db, nil, 0), TemporalUI: "http://localhost:8233", Namespace: "default",
		// The limits count per minute: a test's burst that crossed a minute would get budget back.
		Now: func() time.Time { return time.Date(2026, 1, 1, 12, 0, 30, 0, time.UTC) }}
	for _, o := range opts {
		o(con)
	}
	con.Register(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return &env{t: t, db: db, srv: srv, org: org, ownerToken: owner, memberToken: member}
}

// browser is a client that keeps cookies and does not follow redirects, so tests see each answer.
func (e *env) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (e *env) do(c *http.Client, method, path string, form url.Values) (*http.Response, string) {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// loginForm is a new browser that has loaded the sign-in form (and so holds its pre-session cookie),
// with the form's fields as it would post them.
func (e *env) loginForm() (*http.Client, url.Values) {
	e.t.Helper()
	c := e.browser()
	_, form := e.do(c, "GET", "/console/login", nil)
	m := csrfField.FindStringSubmatch(form)
	if m == nil {
		e.t.Fatalf("no token on the sign-in form:\n%s", form)
	}
	return c, url.Values{"csrf": {m[1]}}
}

// login posts the sign-in form as a browser does: it loads the form first and sends its token back.
func (e *env) login(c *http.Client, token string) (*http.Response, string) {
	e.t.Helper()
	_, form := e.do(c, "GET", "/console/login", nil)
	m := csrfField.FindStringSubmatch(form)
	if m == nil {
		e.t.Fatalf("no token on the sign-in form:\n%s", form)
	}
	return e.do(c, "POST", "/console/login", url.Values{"token": {token}, "csrf": {m[1]}})
}

// signIn signs a browser in and returns it with a CSRF token read from a page, as a browser has it.
func (e *env) signIn(token string) (*http.Client, string) {
	e.t.Helper()
	c := e.browser()
	res, page := e.login(c, token)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/" {
		e.t.Fatalf("sign in: %d %s\n%s", res.StatusCode, res.Header.Get("Location"), page)
	}
	_, page = e.do(c, "GET", "/console/webhooks", nil)
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		e.t.Fatalf("no CSRF token on the page:\n%s", page)
	}
	return c, m[1]
}

func (e *env) rows() string {
	var n struct{ A, B, C, D int64 }
	e.db.Raw(`SELECT (SELECT count(*) FROM webhook_endpoints) AS a, (SELECT count(*) FROM read_keys) AS b,
		(SELECT count(*) FROM integration_keys) AS c, (SELECT count(*) FROM audit_log) AS d`).Find(&n)
	return strings.Join([]string{string(rune('0' + n.A)), string(rune('0' + n.B)), string(rune('0' + n.C)), string(rune('0' + n.D))}, ",")
}

func TestEveryPageNeedsASession(t *testing.T) {
	e := newEnv(t)
	c := e.browser()
	for _, p := range []string{"/console/", "/console/keys", "/console/connectors", "/console/webhooks",
		"/console/webhooks/00000000-0000-0000-0000-000000000000", "/console/audit", "/console/orders",
		"/console/orders/00000000-0000-0000-0000-000000000000", "/console/vendors", "/console/clients"} {
		res, _ := e.do(c, "GET", p, nil)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login" {
			t.Errorf("GET %s: %d %q, want 303 to /console/login", p, res.StatusCode, res.Header.Get("Location"))
		}
	}
	res, page := e.do(c, "GET", "/console/login", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `name="token"`) {
		t.Fatalf("login form: %d", res.StatusCode)
	}
	res, page = e.login(c, "wds_op_nope")
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(page, "invalid_token") || !csrfField.MatchString(page) {
		t.Fatalf("bad token: %d %s", res.StatusCode, page)
	}
}

func TestTheSessionCookieIsHttpOnlyStrictSecureAndStoredHashed(t *testing.T) {
	e := newEnv(t)
	res, _ := e.login(e.browser(), e.ownerToken)
	var ck *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "__Host-wds_console" {
			ck = c
		}
	}
	// Secure, so the __Host- prefix: Path=/ and no Domain, which browsers enforce for that name.
	if ck == nil || !ck.HttpOnly || !ck.Secure || ck.SameSite != http.SameSiteStrictMode || ck.MaxAge != 12*3600 ||
		ck.Path != "/" || ck.Domain != "" {
		t.Fatalf("cookie %+v", ck)
	}
	var stored []struct{ IDHash []byte }
	e.db.Raw(`SELECT id_hash FROM console_sessions`).Find(&stored)
	sum := sha256.Sum256([]byte(ck.Value))
	if len(stored) != 1 || string(stored[0].IDHash) != string(sum[:]) {
		t.Fatal("the session is not stored as the SHA-256 of the cookie")
	}
	// An expired session signs nobody in.
	c, _ := e.signIn(e.ownerToken)
	e.db.Exec(`UPDATE console_sessions SET expires_at = now() - interval '1 second'`)
	if res, _ := e.do(c, "GET", "/console/", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("an expired session: %d", res.StatusCode)
	}
}

// Every POST needs the session's CSRF token; without it the answer is 403 and nothing changes.
func TestAPostWithoutItsCSRFTokenIsRefusedAndChangesNothing(t *testing.T) {
	e := newEnv(t)
	c, csrf := e.signIn(e.ownerToken)
	res, page := e.do(c, "POST", "/console/webhooks", url.Values{"csrf": {csrf}, "url": {"https://127.0.0.1/h"}, "events": {"order.created"}})
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "whsec_") {
		t.Fatalf("create endpoint: %d", res.StatusCode)
	}
	var ep models.Endpoint
	e.db.Take(&ep)
	before := e.rows()
	for _, p := range []string{"/console/keys", "/console/connectors", "/console/webhooks", "/console/webhooks/" + ep.ID.String() + "/disable",
		"/console/webhooks/" + ep.ID.String() + "/delete", "/console/webhooks/" + ep.ID.String() + "/rotate", "/console/logout", "/console/org",
		"/console/vendors", "/console/clients"} {
		for _, token := range []string{"", "0123abcd", strings.Repeat("0", len(csrf))} {
			res, _ := e.do(c, "POST", p, url.Values{"csrf": {token}, "name": {"x"}, "url": {"https://127.0.0.1/x"}, "events": {"order.created"}})
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with csrf %q: %d, want 403", p, token, res.StatusCode)
			}
		}
	}
	if after := e.rows(); after != before {
		t.Fatalf("refused posts changed rows: %s -> %s", before, after)
	}
	// Another session's token does not do either.
	_, other := e.signIn(e.ownerToken)
	if res, _ := e.do(c, "POST", "/console/keys", url.Values{"csrf": {other}, "name": {"x"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("another session's CSRF token: %d", res.StatusCode)
	}
}

// A member sees no owner/admin buttons, and a member's forged POST is 403 and changes nothing.
func TestAMembersConsoleHasNoManagerActions(t *testing.T) {
	e := newEnv(t)
	owner, ocsrf := e.signIn(e.ownerToken)
	e.do(owner, "POST", "/console/webhooks", url.Values{"csrf": {ocsrf}, "url": {"https://127.0.0.1/h"}, "events": {"order.created"}})
	var ep models.Endpoint
	e.db.Take(&ep)
	member, mcsrf := e.signIn(e.memberToken)
	for _, p := range []string{"/console/keys", "/console/connectors", "/console/webhooks"} {
		_, page := e.do(member, "GET", p, nil)
		for _, button := range []string{"Create key", "Create connector key", "Add endpoint", ">Revoke<", ">Disable<", ">Delete<", "Rotate secret"} {
			if strings.Contains(page, button) {
				t.Errorf("%s shows a member %q", p, button)
			}
		}
	}
	if _, page := e.do(member, "GET", "/console/webhooks", nil); !strings.Contains(page, "Send test") {
		t.Error("a member cannot Send test")
	}
	before := e.rows()
	for _, p := range []string{"/console/keys", "/console/connectors", "/console/webhooks", "/console/webhooks/" + ep.ID.String() + "/disable",
		"/console/webhooks/" + ep.ID.String() + "/delete", "/console/webhooks/" + ep.ID.String() + "/rotate"} {
		res, page := e.do(member, "POST", p, url.Values{"csrf": {mcsrf}, "name": {"x"}, "url": {"https://127.0.0.1/x"}, "events": {"order.created"}, "scopes": {"orders:write"}})
		if res.StatusCode != http.StatusForbidden || !strings.Contains(page, "forbidden") {
			t.Errorf("a member's POST %s: %d", p, res.StatusCode)
		}
	}
	if after := e.rows(); after != before {
		t.Fatalf("a member's posts changed rows: %s -> %s", before, after)
	}
}

// A key is shown once, on the answer to its creation, and never again.
func TestSecretsAreShownOnce(t *testing.T) {
	e := newEnv(t)
	c, csrf := e.signIn(e.ownerToken)
	_, page := e.do(c, "POST", "/console/keys", url.Values{"csrf": {csrf}, "name": {"ci"}, "scope": {"read_only"}})
	key := regexp.MustCompile(`pck_live_[A-Za-z0-9_-]{43}`).FindString(page)
	if key == "" {
		t.Fatalf("no key shown:\n%s", page)
	}
	if _, again := e.do(c, "GET", "/console/keys", nil); strings.Contains(again, key) || !strings.Contains(again, key[:12]) {
		t.Fatal("the key list shows the key again (or not its hint)")
	}
}

// The orders, vendors and clients pages run the workspace operations: ship, track and deliver an
// order; add and edit a vendor and issue its claim token (shown once); add and edit a client.
func TestWorkspacePagesRunTheOperations(t *testing.T) {
	e := newEnv(t)
	c, csrf := e.signIn(e.ownerToken)
	var store models.Store
	e.db.Take(&store)
	var owner models.User
	e.db.Where("email = ?", "o@acme.test").Take(&owner)
	s := store.ID.String()
	order, err := ingest.NewService(e.db, nil).CreateAppOrder(context.Background(), e.org.ID, owner.ID, ingest.AppOrder{StoreID: &s,
		Order: ingest.Order{Lines: []ingest.Line{{Description: "Mug", Quantity: 1, UnitPriceCents: 900}}}})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path string, form url.Values) (int, string) {
		form.Set("csrf", csrf)
		res, page := e.do(c, "POST", path, form)
		if res.StatusCode == http.StatusSeeOther {
			res, page = e.do(c, "GET", res.Header.Get("Location"), nil)
		}
		return res.StatusCode, page
	}
	id := order.ID.String()
	if code, page := post("/console/orders/"+id+"/ship", url.Values{"carrier": {"UPS"}, "tracking_number": {"1Z1"}}); code != 200 || !strings.Contains(page, `id="fulfillment">shipped<`) {
		t.Fatalf("ship: %d", code)
	}
	var shipment struct{ ID string }
	e.db.Raw(`SELECT id::text AS id FROM shipments`).Find(&shipment)
	if code, page := post("/console/shipments/"+shipment.ID+"/delivered", url.Values{"order": {id}}); code != 200 || !strings.Contains(page, `id="fulfillment">delivered<`) {
		t.Fatalf("delivered: %d", code)
	}
	if code, page := post("/console/orders/"+id+"/ship", url.Values{"carrier": {""}}); code != 422 || !strings.Contains(page, "validation_failed") {
		t.Fatalf("ship without a carrier: %d", code)
	}
	// A shipment form that fails comes back on its order's page, whose id is in the form, not the path.
	if code, page := post("/console/shipments/"+shipment.ID+"/tracking", url.Values{"order": {id}, "tracking_number": {""}}); code != 422 ||
		!strings.Contains(page, "validation_failed") || !strings.Contains(page, `id="fulfillment">delivered<`) {
		t.Fatalf("tracking without a number: %d\n%s", code, page)
	}
	// A tracking number the service refuses stays in its shipment's row, not in the Ship form.
	long := strings.Repeat("9", 101)
	if code, page := post("/console/shipments/"+shipment.ID+"/tracking", url.Values{"order": {id}, "tracking_number": {long}}); code != 422 ||
		!strings.Contains(page, `name="tracking_number" value="`+long+`" placeholder`) || strings.Count(page, long) != 1 {
		t.Fatalf("a refused tracking number: %d\n%s", code, page)
	}
	if code, _ := post("/console/vendors", url.Values{"store_id": {s}, "name": {"Clay Supply"}, "email": {"c@clay.test"}}); code != 200 {
		t.Fatalf("add vendor: %d", code)
	}
	var vendor struct{ ID string }
	e.db.Raw(`SELECT id::text AS id FROM vendors`).Find(&vendor)
	if code, page := post("/console/vendors/"+vendor.ID, url.Values{"name": {"Clay Supply Co."}, "email": {""}}); code != 200 || !strings.Contains(page, "Clay Supply Co.") {
		t.Fatalf("edit vendor: %d", code)
	}
	if code, page := post("/console/vendors/"+vendor.ID+"/claim-token", url.Values{}); code != 200 || !regexp.MustCompile(`vct_[A-Za-z0-9_-]{43}`).MatchString(page) {
		t.Fatalf("claim token: %d", code)
	}
	if code, _ := post("/console/clients", url.Values{"store_id": {s}, "email": {"ann@example.com"}, "first_name": {"Ann"}}); code != 200 {
		t.Fatalf("add client: %d", code)
	}
	var client struct{ ID string }
	e.db.Raw(`SELECT id::text AS id FROM clients WHERE email = 'ann@example.com'`).Find(&client)
	if code, page := post("/console/clients/"+client.ID, url.Values{"email": {"ann@example.com"}, "first_name": {"Ann"}, "last_name": {"Lee"}, "tags": {"vip, b2b"}}); code != 200 || !strings.Contains(page, "vip, b2b") {
		t.Fatalf("edit client: %d", code)
	}
	types := eventstest.Written(t, e.db)
	want := "order.created,order.shipped,shipment.tracking_added,order.delivered,vendor.created,vendor.updated,client.created,client.updated"
	if got := strings.Join(types, ","); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
}
