package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

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
