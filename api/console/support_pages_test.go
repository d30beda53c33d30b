package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/deliverytest"
	"wds/workflows/contract"
)

func TestEventsPageFindsAnOrderByNumberAndOpensItsEvent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var owner models.User
	e.db.Raw("SELECT u.* FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.org_id = ? AND m.role = 'owner'", e.org.ID).Scan(&owner)
	var store uuid.UUID
	e.db.Raw("SELECT id FROM stores WHERE org_id = ?", e.org.ID).Row().Scan(&store)
	order := uuid.New()
	if err := e.db.Exec(`INSERT INTO orders (id, org_id, store_id, number, currency, subtotal_cents, total_cents, status)
		VALUES (?, ?, ?, 1042, 'USD', 100, 100, 'invoiced')`, order, e.org.ID, store).Error; err != nil {
		t.Fatal(err)
	}
	ep := models.Endpoint{ID: uuid.New(), OrgID: e.org.ID, URL: "https://receiver.example/hooks", EventTypes: models.TextArray{"order.created"},
		SecretSealed: []byte("x"), Enabled: true, MaxAttempts: 5, CreatedBy: owner.ID}
	if err := e.db.Create(&ep).Error; err != nil {
		t.Fatal(err)
	}
	ev, _ := deliverytest.Emit(ctx, e.db, e.org.ID, nil, events.OrderCreated, map[string]any{"id": order, "number": "1042"})
	other, _ := deliverytest.Emit(ctx, e.db, e.org.ID, nil, events.OrderCreated, map[string]any{"id": uuid.New()})
	code := 503
	d := models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: ev, EndpointID: ep.ID, EventType: "order.created", ChainID: uuid.New(),
		WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: "dropped", ResponseStatus: &code, Error: "HTTP 503", AttemptedAt: time.Now()}
	if err := e.db.Create(&d).Error; err != nil {
		t.Fatal(err)
	}

	c, _ := e.signIn(e.memberToken)
	res, page := e.do(c, "GET", "/console/events?order=1042", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "/console/events/"+ev.String()) || strings.Contains(page, other.String()) ||
		!strings.Contains(page, `class="st-dropped"`) || !strings.Contains(page, `value="1042"`) {
		t.Fatalf("search by number: %d\n%s", res.StatusCode, page)
	}
	if orderLink := `<a href="/console/orders/` + order.String() + `" title="` + order.String() + `">1042</a>`; !strings.Contains(page, orderLink) {
		t.Fatalf("the events list names the order by its id, not its number 1042:\n%s", page)
	}
	if _, page := e.do(c, "GET", "/console/events?outcome=in_progress", nil); !strings.Contains(page, other.String()) || strings.Contains(page, ev.String()) {
		t.Fatalf("outcome filter:\n%s", page)
	}
	// A second endpoint got the event: the row says dropped, and where; searched by that endpoint,
	// it is succeeded.
	second := models.Endpoint{ID: uuid.New(), OrgID: e.org.ID, URL: "https://second.example/hooks", EventTypes: models.TextArray{"order.created"},
		SecretSealed: []byte("x"), Enabled: true, MaxAttempts: 5, CreatedBy: owner.ID}
	e.db.Create(&second)
	e.db.Create(&models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: ev, EndpointID: second.ID, EventType: "order.created", ChainID: uuid.New(),
		WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: "succeeded", AttemptedAt: time.Now()})
	_, page = e.do(c, "GET", "/console/events?order=1042", nil)
	for _, want := range []string{`<li class="st-dropped">dropped at https://receiver.example/hooks</li>`, `<li class="st-succeeded">succeeded at https://second.example/hooks</li>`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the row does not say %q:\n%s", want, page)
		}
	}
	_, page = e.do(c, "GET", "/console/events?order=1042&endpoint="+second.ID.String(), nil)
	if !strings.Contains(page, `<td class="st-succeeded">succeeded<ul`) || !strings.Contains(page, `<option value="`+second.ID.String()+`" selected>`) {
		t.Fatalf("searched by the second endpoint:\n%s", page)
	}
	res, page = e.do(c, "GET", "/console/events/"+ev.String(), nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "503 Service Unavailable") || strings.Contains(page, "HTTP 503") || !strings.Contains(page, "https://receiver.example/hooks") ||
		!strings.Contains(page, "http://localhost:8233/namespaces/default/workflows/webhook-event%2F"+ev.String()) ||
		!strings.Contains(page, `&#34;number&#34;: &#34;1042&#34;`) || !strings.Contains(page, ` title="`+order.String()+`">1042</a>`) {
		t.Fatalf("event page: %d\n%s", res.StatusCode, page)
	}

	for _, c2 := range []struct {
		path   string
		status int
		code   string
	}{
		{"/console/events?order=A-1042", 400, "invalid_parameter"},
		{"/console/events?since=yesterday", 400, "invalid_parameter"},
		{"/console/events?outcome=lost", 400, "invalid_parameter"},
		{"/console/events/" + uuid.NewString(), 404, "not_found"},
		{"/console/events/nope", 404, "not_found"},
	} {
		res, page := e.do(c, "GET", c2.path, nil)
		if res.StatusCode != c2.status || !strings.Contains(page, "<code>"+c2.code+"</code>") {
			t.Errorf("%s: %d\n%s", c2.path, res.StatusCode, page)
		}
	}
	// Another org's event does not exist for this operator.
	org2, _ := workspace.NewService(e.db).CreateOrg(ctx, "Elsewhere")
	foreign, _ := deliverytest.Emit(ctx, e.db, org2.ID, nil, events.OrderCreated, map[string]any{"id": uuid.New()})
	if res, _ := e.do(c, "GET", "/console/events/"+foreign.String(), nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another org's event: %d", res.StatusCode)
	}
}

func TestResendFromTheEventPage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var owner models.User
	e.db.Raw("SELECT u.* FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.org_id = ? AND m.role = 'owner'", e.org.ID).Scan(&owner)
	ep := models.Endpoint{ID: uuid.New(), OrgID: e.org.ID, URL: "https://receiver.example/hooks", EventTypes: models.TextArray{"order.created"},
		SecretSealed: []byte("x"), Enabled: true, MaxAttempts: 5, CreatedBy: owner.ID}
	if err := e.db.Create(&ep).Error; err != nil {
		t.Fatal(err)
	}
	ev, _ := deliverytest.Emit(ctx, e.db, e.org.ID, nil, events.OrderCreated, map[string]any{"id": uuid.New()})
	e.db.Exec("UPDATE events SET dispatched_at = now()")
	d := models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: ev, EndpointID: ep.ID, EventType: "order.created", ChainID: uuid.New(),
		WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: "succeeded", AttemptedAt: time.Now()}
	e.db.Create(&d)
	path := "/console/events/" + ev.String()

	member, memberCSRF := e.signIn(e.memberToken)
	if _, page := e.do(member, "GET", path, nil); strings.Contains(page, ">Resend</button>") {
		t.Fatal("a member sees Resend")
	}
	if res, _ := e.do(member, "POST", path+"/resend", url.Values{"csrf": {memberCSRF}, "endpoint": {ep.ID.String()}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("member's forged resend: %d", res.StatusCode)
	}
	c, csrf := e.signIn(e.ownerToken)
	if res, _ := e.do(c, "POST", path+"/resend", url.Values{"endpoint": {ep.ID.String()}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("resend without CSRF: %d", res.StatusCode)
	}
	_, page := e.do(c, "GET", path, nil)
	if !strings.Contains(page, ">Resend</button>") {
		t.Fatalf("owner sees no Resend:\n%s", page)
	}
	res, _ := e.do(c, "POST", path+"/resend", url.Values{"csrf": {csrf}, "endpoint": {ep.ID.String()}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != path {
		t.Fatalf("resend: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	// The banner shows once: the page the redirect lands on shows it, a reload does not.
	if _, page := e.do(c, "GET", path, nil); !strings.Contains(page, "Resent:") || !strings.Contains(page, "resend ·") {
		t.Fatalf("after resend:\n%s", page)
	} else if strings.Contains(page, ">Resend</button>") || !strings.Contains(page, "a chain to it is in progress") {
		t.Fatalf("the endpoint's latest chain is in progress, yet the page offers Resend:\n%s", page)
	}
	if _, page := e.do(c, "GET", path, nil); strings.Contains(page, "Resent:") {
		t.Fatalf("the banner shows again on reload:\n%s", page)
	}
	res, page = e.do(c, "POST", path+"/resend", url.Values{"csrf": {csrf}, "endpoint": {ep.ID.String()}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(page, "<code>delivery_in_progress</code>") {
		t.Fatalf("second resend: %d\n%s", res.StatusCode, page)
	}
	var n int64
	e.db.Model(&models.Dispatch{}).Where("kind = 'resend'").Count(&n)
	if n != 1 {
		t.Fatalf("%d resends queued, want 1", n)
	}
}
