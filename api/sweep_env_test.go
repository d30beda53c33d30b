package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/api/console"
	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/endpoints"
	"wds/internal/eventsearch"
	"wds/internal/platform/secrets"
	"wds/internal/recovery"
	"wds/internal/resend"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
)

// sweepEnv is the whole HTTP surface `wds serve` mounts (Read, Integration and Operator APIs and the
// console) over real PostgreSQL, for the sweeps that call every route (tenancy_test.go,
// secrets_log_test.go). Delivery starts are recorded, not sent: no Temporal here.
type sweepEnv struct {
	t        *testing.T
	db       *gorm.DB
	box      *secrets.Box
	router   *gin.Engine
	srv      *httptest.Server
	lastUsed *apikeys.LastUsed
	// onAnswer, when set, sees every answer (the secrets sweep collects what it was shown).
	onAnswer func(answer)
}

// nopStarter stands in for the Temporal starter: events and dispatches stay queued in PostgreSQL.
type nopStarter struct{}

func (nopStarter) StartEvents(context.Context, []uuid.UUID)      {}
func (nopStarter) StartDispatches(context.Context, ...uuid.UUID) {}

func newSweepEnv(t *testing.T, db *gorm.DB, log logrus.FieldLogger) *sweepEnv {
	t.Helper()
	box, err := secrets.NewBox(secrets.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	e := &sweepEnv{t: t, db: db, box: box, lastUsed: apikeys.NewLastUsed(db, log)}
	svc := endpoints.NewService(db, box, endpoints.Options{AllowPrivate: true})
	recoveries := recovery.NewService(db, nil, 0)
	d := apitest.Domain(db, box, nopStarter{})
	e.router, err = api.NewRouter(api.Deps{Services: api.NewServices(db, d), Log: log, Webhooks: svc, LastUsed: e.lastUsed,
		Dispatches: nopStarter{}, Events: eventsearch.NewService(db, box, nil), Resends: resend.NewService(db, nopStarter{}), Recoveries: recoveries})
	if err != nil {
		t.Fatal(err)
	}
	(&console.Console{DB: db, Log: log, Members: d.People, Sessions: d.People, Keys: d.Keys, KeyLists: d.KeyLists, Audit: d.Audit, Deliveries: d.Deliveries, Events: eventsearch.NewService(db, box, nil), Resends: resend.NewService(db, nopStarter{}),
		Shipping: d.Shipping, Vendors: d.Vendors, Clients: d.Orders,
		Webhooks: svc, Recoveries: recoveries, Dispatches: nopStarter{},
		TemporalUI: "http://localhost:8233", Namespace: "default", InsecureCookie: true}).Register(e.router)
	e.srv = httptest.NewServer(e.router)
	t.Cleanup(e.srv.Close)
	return e
}

// answer is one HTTP answer.
type answer struct {
	status int
	body   []byte
	header http.Header
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("answer is not a JSON object (%d): %s", a.status, a.body)
	}
	return m
}

// str is field k of the JSON answer, which must be a non-empty string.
func (a answer) str(t *testing.T, k string) string {
	t.Helper()
	s, _ := a.json(t)[k].(string)
	if s == "" {
		t.Fatalf("answer %d has no %q: %s", a.status, k, a.body)
	}
	return s
}

// send makes one request. body is JSON (any value but a string, which is sent as it is) or, for the
// console, url.Values; bearer may be empty; c carries cookies (the console) or is nil.
func (e *sweepEnv) send(c *http.Client, method, path, bearer string, body any, hdr map[string]string) answer {
	e.t.Helper()
	var rd io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case url.Values:
		rd = strings.NewReader(b.Encode())
		contentType = "application/x-www-form-urlencoded"
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = strings.NewReader(string(raw))
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if c == nil {
		c = openapitest.Client(e.t, nil)
	}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, body: out, header: res.Header}
	if e.onAnswer != nil {
		e.onAnswer(a)
	}
	return a
}

// must sends and insists on status.
func (e *sweepEnv) must(status int, method, path, bearer string, body any) answer {
	e.t.Helper()
	a := e.send(nil, method, path, bearer, body, nil)
	if a.status != status {
		e.t.Fatalf("%s %s: %d, want %d: %s", method, path, a.status, status, a.body)
	}
	return a
}

// browser is a console client: it keeps cookies and does not follow redirects.
type browser struct {
	c    *http.Client
	csrf string
}

var sweepCSRF = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// signIn opens a console session with an operator token, as a person at the sign-in form does.
func (e *sweepEnv) signIn(token string) *browser {
	e.t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if a := e.login(b.c, token); a.status != http.StatusSeeOther {
		e.t.Fatalf("console sign-in: %d %s", a.status, a.body)
	}
	page := e.send(b.c, "GET", "/console/webhooks", "", nil, nil)
	m := sweepCSRF.FindSubmatch(page.body)
	if m == nil {
		e.t.Fatalf("no CSRF token on the console page (%d)", page.status)
	}
	b.csrf = string(m[1])
	return b
}

// login posts the sign-in form as a browser does: it loads the form, which sets the pre-session
// cookie its token is bound to, and sends the token back with the operator token.
func (e *sweepEnv) login(c *http.Client, token string) answer {
	e.t.Helper()
	form := e.send(c, "GET", "/console/login", "", nil, nil)
	m := sweepCSRF.FindSubmatch(form.body)
	if m == nil {
		e.t.Fatalf("no token on the sign-in form (%d)", form.status)
	}
	return e.send(c, "POST", "/console/login", "", url.Values{"token": {token}, "csrf": {string(m[1])}}, nil)
}

// post sends a console form with the session's CSRF token.
func (e *sweepEnv) post(b *browser, path string, form url.Values) answer {
	e.t.Helper()
	f := url.Values{"csrf": {b.csrf}}
	for k, v := range form {
		f[k] = v
	}
	return e.send(b.c, "POST", path, "", f, nil)
}

// tenant is an org with one of every resource, made through the APIs as its own operators would,
// and every credential that reaches them.
type tenant struct {
	name               string
	org, store         uuid.UUID
	ownerID, memberID  uuid.UUID
	owner, member      string // operator tokens
	readKey            string // read_write, the tenant's Read API credential
	readKeyID          uuid.UUID
	targetReadKeyID    uuid.UUID // a second read key, for revocations
	intKey             string    // every scope, generic, unsigned: the Integration API credential
	intKeyID           uuid.UUID
	targetIntKeyID     uuid.UUID // a second integration key, for revocations
	orderID, paymentID uuid.UUID
	orderExternalID    string
	clientID, vendorID uuid.UUID
	productID          uuid.UUID
	shipmentID         uuid.UUID
	claimToken         string
	endpointID         uuid.UUID // operated on through the Operator API
	consoleEndpointID  uuid.UUID // operated on through the console
	// apiResendID and consoleResendID receive the order's events again (an order's resend), each
	// from its own surface, with no chain of them in progress.
	apiResendID, consoleResendID uuid.UUID
	deliveryID                   uuid.UUID // a dropped delivery of endpointID
	eventID                      uuid.UUID // the order.created event that delivery is of
	recoveryID                   uuid.UUID // a running recovery of endpointID
	console                      *browser  // the owner's console session
	secrets                      []string  // every secret the tenant was given
}

func (e *sweepEnv) id(a answer, k string) uuid.UUID {
	e.t.Helper()
	id, err := uuid.Parse(a.str(e.t, k))
	if err != nil {
		e.t.Fatalf("%s is not a UUID: %s", k, a.body)
	}
	return id
}

// tenant builds an org named name with one of every resource.
func (e *sweepEnv) tenant(name string) *tenant {
	t := e.t
	t.Helper()
	ctx := context.Background()
	x := &tenant{name: name}
	org, err := workspace.NewService(e.db).CreateOrg(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	store, err := workspace.NewService(e.db).CreateStore(ctx, org.ID, name+" store", "USD")
	if err != nil {
		t.Fatal(err)
	}
	x.org, x.store = org.ID, store.ID
	owner, ownerTok, err := workspace.NewService(e.db).CreateUser(ctx, org.ID, "owner@"+name+".test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	member, memberTok, err := workspace.NewService(e.db).CreateUser(ctx, org.ID, "member@"+name+".test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	x.ownerID, x.owner, x.memberID, x.member = owner.ID, ownerTok, member.ID, memberTok
	x.secrets = append(x.secrets, ownerTok, memberTok)
	orgPath := "/admin/v1/orgs/" + x.org.String()

	rk := e.must(http.StatusCreated, "POST", orgPath+"/read-keys", x.owner, map[string]any{"scope": "read_write", "name": "sweep"})
	x.readKey, x.readKeyID = rk.str(t, "key"), e.id(rk, "id")
	rk = e.must(http.StatusCreated, "POST", orgPath+"/read-keys", x.owner, map[string]any{"name": "to revoke"})
	x.targetReadKeyID = e.id(rk, "id")
	x.secrets = append(x.secrets, x.readKey, rk.str(t, "key"))

	ik := e.must(http.StatusCreated, "POST", orgPath+"/integration-keys", x.owner,
		map[string]any{"store_id": x.store, "scopes": models.IntegrationScopes, "label": "sweep"})
	x.intKey, x.intKeyID = ik.str(t, "key"), e.id(ik, "id")
	ik = e.must(http.StatusCreated, "POST", orgPath+"/integration-keys", x.owner,
		map[string]any{"store_id": x.store, "scopes": []string{models.ScopeOrdersWrite}, "label": "to revoke"})
	x.targetIntKeyID = e.id(ik, "id")
	x.secrets = append(x.secrets, x.intKey, ik.str(t, "key"))

	// An order with a client and a part payment (so more payments, a refund and a cancel all apply).
	x.orderExternalID = "ord-" + name
	o := e.must(http.StatusCreated, "POST", "/integrations/v1/orders", x.intKey, map[string]any{
		"external_id": x.orderExternalID,
		"client":      map[string]any{"external_id": "cl-" + name, "email": "client@" + name + ".test"},
		"lines":       []map[string]any{{"description": "Mug", "quantity": 2, "unit_price_cents": 1000}},
		"payment":     map[string]any{"external_id": "pay-" + name, "amount_cents": 500, "method": "card"}})
	x.orderID, x.paymentID, x.clientID = e.id(o, "id"), e.id(o, "payment_id"), e.id(o, "client_id")

	x.vendorID = e.id(e.must(http.StatusCreated, "POST", orgPath+"/vendors", x.owner,
		map[string]any{"store_id": x.store, "name": "Supplier of " + name}), "id")
	x.claimToken = e.must(http.StatusCreated, "POST", "/admin/v1/vendors/"+x.vendorID.String()+"/claim-token", x.owner, nil).str(t, "token")
	x.secrets = append(x.secrets, x.claimToken)
	x.shipmentID = e.id(e.must(http.StatusCreated, "POST", "/admin/v1/orders/"+x.orderID.String()+"/shipments", x.owner,
		map[string]any{"carrier": "UPS"}), "id")

	seller, err := catalog.NewService(e.db, nil).CreateSeller(ctx, name+" seller")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.NewService(e.db, nil).LinkSeller(ctx, x.org, x.store, seller.ID); err != nil {
		t.Fatal(err)
	}
	p, err := catalog.NewService(e.db, nil).CreateProduct(ctx, catalog.NewProduct{SellerID: seller.ID, Name: "Lamp", PriceCents: 4200, Published: true})
	if err != nil {
		t.Fatal(err)
	}
	x.productID = p.ID

	// A custom header's value is a credential too (an Authorization token): stored sealed, never in a
	// table in plaintext.
	headerToken, _, err := secrets.NewAPIKey("hdr_")
	if err != nil {
		t.Fatal(err)
	}
	x.secrets = append(x.secrets, headerToken)
	for _, dst := range []*uuid.UUID{&x.endpointID, &x.consoleEndpointID, &x.apiResendID, &x.consoleResendID} {
		ep := e.must(http.StatusCreated, "POST", "/admin/v1/rpc/outbound_webhook_create", x.owner, map[string]any{
			"p_org_id": x.org, "p_url": "https://127.0.0.1/hooks/" + name, "p_event_types": []string{"order.created"},
			"p_headers": map[string]string{"Authorization": "Bearer " + headerToken}})
		*dst = e.id(ep, "id")
		x.secrets = append(x.secrets, ep.str(t, "secret"))
	}
	// A dropped delivery of the order's order.created event, as the worker leaves one when an
	// endpoint never answered (the worker is not part of this surface).
	x.deliveryID = uuid.New()
	err = e.db.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id,
			attempt, status, error, attempted_at)
		SELECT ?, org_id, id, ?, type, ?, 'webhook-event/' || id, 5, 'dropped', 'connection refused', now()
		FROM events WHERE org_id = ? AND type = 'order.created'`, x.deliveryID, x.endpointID, uuid.New(), x.org).Error
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.Raw("SELECT event_id FROM webhook_deliveries WHERE id = ?", x.deliveryID).Row().Scan(&x.eventID); err != nil {
		t.Fatal(err)
	}
	// Started, as the relay leaves events (the starter is not part of this surface): resend needs it.
	e.db.Exec("UPDATE events SET dispatched_at = now() WHERE org_id = ?", x.org)
	rec := e.must(http.StatusAccepted, "POST", "/admin/v1/endpoints/"+x.endpointID.String()+"/recover", x.owner,
		map[string]any{"since": time.Now().Add(-time.Hour)})
	x.recoveryID = e.id(rec, "id")
	x.console = e.signIn(x.owner)
	return x
}
