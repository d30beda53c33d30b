package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"wds/internal/workspace"
	"wds/models"
)

// Send test from the console is audit logged with the operator who pressed it, and limited per
// endpoint: past ten a minute the page answers 429 rate_limited with Retry-After and queues nothing,
// while another endpoint still tests.
func TestConsoleSendTestIsLimitedPerEndpointAndAudited(t *testing.T) {
	e := newEnv(t)
	owner, ocsrf := e.signIn(e.ownerToken)
	for _, u := range []string{"https://127.0.0.1/a", "https://127.0.0.1/b"} {
		if res, _ := e.do(owner, "POST", "/console/webhooks", url.Values{"csrf": {ocsrf}, "url": {u}, "events": {"order.created"}}); res.StatusCode != http.StatusOK {
			t.Fatalf("create endpoint: %d", res.StatusCode)
		}
	}
	var eps []models.Endpoint
	e.db.Order("url").Find(&eps)
	member, mcsrf := e.signIn(e.memberToken)
	test := func(ep models.Endpoint) *http.Response {
		res, _ := e.do(member, "POST", "/console/webhooks/"+ep.ID.String()+"/test", url.Values{"csrf": {mcsrf}})
		return res
	}
	for i := range 10 {
		if res := test(eps[0]); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("test %d: %d", i+1, res.StatusCode)
		}
	}
	events := func() (n int64) {
		e.db.Raw(`SELECT count(*) FROM events WHERE type = 'webhook.test'`).Scan(&n)
		return n
	}
	before := events()
	res, page := e.do(member, "POST", "/console/webhooks/"+eps[0].ID.String()+"/test", url.Values{"csrf": {mcsrf}})
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "60" || !strings.Contains(page, "rate_limited") {
		t.Fatalf("the 11th test of one endpoint: %d Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if events() != before {
		t.Fatal("a refused test queued an event")
	}
	if res := test(eps[1]); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("another endpoint's test: %d", res.StatusCode)
	}
	var audited []struct {
		ActorID, TargetID string
	}
	e.db.Raw(`SELECT actor_id, target_id FROM audit_log WHERE action = 'webhook_endpoint.test' AND org_id = ?`, e.org.ID).Scan(&audited)
	if len(audited) != 11 {
		t.Fatalf("%d audit rows for 11 tests", len(audited))
	}
	for _, a := range audited {
		if a.ActorID != e.userOf(e.memberToken).String() {
			t.Fatalf("audit row %+v: not the member who pressed Send test", a)
		}
	}
}

// Another org's operator posting Send test for this org's endpoint gets 404 and spends none of its
// budget: the endpoint's own members still have all ten tests.
func TestAnotherOrgCannotSpendAnEndpointsTestBudget(t *testing.T) {
	e := newEnv(t)
	owner, ocsrf := e.signIn(e.ownerToken)
	if res, _ := e.do(owner, "POST", "/console/webhooks", url.Values{"csrf": {ocsrf}, "url": {"https://127.0.0.1/a"}, "events": {"order.created"}}); res.StatusCode != http.StatusOK {
		t.Fatalf("create endpoint: %d", res.StatusCode)
	}
	var ep models.Endpoint
	e.db.Take(&ep)
	ctx := context.Background()
	other, err := workspace.NewService(e.db).CreateOrg(ctx, "Elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	_, stranger, err := workspace.NewService(e.db).CreateUser(ctx, other.ID, "s@elsewhere.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	s, scsrf := e.signIn(stranger)
	for range 20 {
		if res, _ := e.do(s, "POST", "/console/webhooks/"+ep.ID.String()+"/test", url.Values{"csrf": {scsrf}}); res.StatusCode != http.StatusNotFound {
			t.Fatalf("another org's Send test: %d, want 404", res.StatusCode)
		}
	}
	for i := range 10 {
		if res, _ := e.do(owner, "POST", "/console/webhooks/"+ep.ID.String()+"/test", url.Values{"csrf": {ocsrf}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("the org's own test %d: %d, want the whole budget left", i+1, res.StatusCode)
		}
	}
}
