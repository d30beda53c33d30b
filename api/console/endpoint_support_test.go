package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/internal/events"
	"wds/models"
	"wds/test/deliverytest"
	"wds/workflows/contract"
)

func TestEndpointPageEditsSettingsShowsHealthAndRecovers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var owner models.User
	e.db.Raw("SELECT u.* FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.org_id = ? AND m.role = 'owner'", e.org.ID).Scan(&owner)
	ep := models.Endpoint{ID: uuid.New(), OrgID: e.org.ID, URL: "https://receiver.example/hooks", EventTypes: models.TextArray{"order.created"},
		SecretSealed: []byte("x"), Enabled: true, MaxAttempts: 1, CreatedBy: owner.ID}
	if err := e.db.Create(&ep).Error; err != nil {
		t.Fatal(err)
	}
	for range 3 {
		ev, _ := deliverytest.Emit(ctx, e.db, e.org.ID, nil, events.OrderCreated, map[string]any{"id": uuid.New()})
		code := 503
		// written as the attempt writes it, keeping the endpoint's health
		_, err := delivery.RecordAttempt(ctx, e.db, &models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: ev, EndpointID: ep.ID, EventType: "order.created", ChainID: uuid.New(),
			WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: "dropped", ResponseStatus: &code, Error: "HTTP 503", AttemptedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
	}
	path := "/console/webhooks/" + ep.ID.String()
	c, csrf := e.signIn(e.ownerToken)
	res, page := e.do(c, "GET", path, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "<h2>Health</h2>") || !strings.Contains(page, "<td>3</td>\n<td id=\"unrecovered\"><strong class=\"st-dropped\">3</strong>") ||
		!strings.Contains(page, "<td>0</td><td>3</td>") {
		t.Fatalf("health: %d\n%s", res.StatusCode, page)
	}

	// Settings: a refused header comes back on the form with the code and the inputs kept.
	res, page = e.do(c, "POST", "/console/endpoints/"+ep.ID.String()+"/settings", url.Values{"csrf": {csrf}, "rate_limit": {"20"}, "headers": {"Host: evil.example"}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "<code>invalid_parameter</code>") || !strings.Contains(page, "Host: evil.example</textarea>") {
		t.Fatalf("refused header: %d\n%s", res.StatusCode, page)
	}
	res, page = e.do(c, "POST", "/console/endpoints/"+ep.ID.String()+"/settings", url.Values{"csrf": {csrf}, "rate_limit": {"20"}, "headers": {"X-Token: a\x1bb"}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "<code>invalid_parameter</code>") || !strings.Contains(page, "value of X-Token") {
		t.Fatalf("control character in a header: %d\n%s", res.StatusCode, page)
	}
	res, _ = e.do(c, "POST", "/console/endpoints/"+ep.ID.String()+"/settings", url.Values{"csrf": {csrf}, "rate_limit": {"20"}, "headers": {"Authorization: Bearer tok\nX-Tenant: acme"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("settings: %d", res.StatusCode)
	}
	var saved models.Endpoint
	e.db.Where("id = ?", ep.ID).Take(&saved)
	if saved.RateLimit == nil || *saved.RateLimit != 20 || len(saved.Headers) != 2 || saved.HeadersSealed == nil {
		t.Fatalf("saved %+v", saved)
	}

	// Recover: the count first, then the recovery and its progress.
	since := time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04")
	_, page = e.do(c, "GET", path+"?recover_since="+url.QueryEscape(since), nil)
	if !strings.Contains(page, "This re-fires <strong>3</strong> dropped chains.") {
		t.Fatalf("preview:\n%s", page)
	}
	res, _ = e.do(c, "POST", "/console/endpoints/"+ep.ID.String()+"/recover", url.Values{"csrf": {csrf}, "since": {since}})
	var rec models.Recovery
	e.db.Where("endpoint_id = ?", ep.ID).Take(&rec)
	recPath := "/console/recoveries/" + rec.ID.String()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != recPath {
		t.Fatalf("recover: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	// The recovery's own page follows its progress by reloading itself while it runs.
	_, page = e.do(c, "GET", recPath, nil)
	for _, want := range []string{`class="st-running">running</strong>, 0 of 3 chains started`, `<progress max="3" value="0">`,
		`<meta http-equiv="refresh" content="2; url=` + recPath + `">`, "Recovery started", `href="/console/webhooks/` + ep.ID.String() + `"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the recovery's page lacks %q:\n%s", want, page)
		}
	}
	_, page = e.do(c, "GET", path, nil)
	if !strings.Contains(page, `class="st-running">running</strong>, 0 of 3 chains started`) || !strings.Contains(page, `<a href="`+recPath+`">follow its progress</a>`) {
		t.Fatalf("progress:\n%s", page)
	}
	res, page = e.do(c, "POST", "/console/endpoints/"+ep.ID.String()+"/recover", url.Values{"csrf": {csrf}, "since": {since}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(page, "<code>recovery_in_progress</code>") {
		t.Fatalf("second recovery: %d\n%s", res.StatusCode, page)
	}
	res, _ = e.do(c, "POST", recPath+"/cancel", url.Values{"csrf": {csrf}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != recPath {
		t.Fatalf("cancel: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if _, page = e.do(c, "GET", recPath, nil); !strings.Contains(page, `class="st-cancelled">cancelled</strong>`) || strings.Contains(page, "http-equiv") {
		t.Fatalf("the cancelled recovery's page (it no longer reloads):\n%s", page)
	}
	if _, page = e.do(c, "GET", path, nil); !strings.Contains(page, `class="st-cancelled">cancelled</strong>`) {
		t.Fatalf("after cancel:\n%s", page)
	}
	// Since after the drops, nothing to recover: the count and the recovery say so, and the empty
	// recovery does not hide the cancelled one as the endpoint's latest.
	now := time.Now().UTC().Format(time.RFC3339Nano)
	if _, page = e.do(c, "GET", path+"?recover_since="+url.QueryEscape(now), nil); !strings.Contains(page, "Nothing to recover since "+now) ||
		strings.Contains(page, ">Recover</button>") {
		t.Fatalf("an empty count:\n%s", page)
	}
	res, _ = e.do(c, "POST", "/console/endpoints/"+ep.ID.String()+"/recover", url.Values{"csrf": {csrf}, "since": {now}})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/console/recoveries/") {
		t.Fatalf("an empty recovery: %d %s", res.StatusCode, loc)
	}
	if _, page = e.do(c, "GET", res.Header.Get("Location"), nil); !strings.Contains(page, "Nothing to recover</strong> since") ||
		strings.Contains(page, "http-equiv") || strings.Contains(page, "Workflow") {
		t.Fatalf("the empty recovery's page:\n%s", page)
	}
	if _, page = e.do(c, "GET", path, nil); !strings.Contains(page, `class="st-cancelled">cancelled</strong>`) {
		t.Fatalf("the empty recovery hides the latest:\n%s", page)
	}
	if _, page = e.do(c, "GET", "/console/audit", nil); !strings.Contains(page, `<a href="`+recPath+`" title="`+rec.ID.String()+`">recovery of https://`) {
		t.Fatalf("the audit log does not link the recovery's page:\n%s", page)
	}

	// Disabled for failing: a banner with Re-enable.
	e.db.Exec("UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing' WHERE id = ?", ep.ID)
	if _, page = e.do(c, "GET", path, nil); !strings.Contains(page, "Disabled for failing") || !strings.Contains(page, ">Re-enable</button>") {
		t.Fatalf("banner:\n%s", page)
	}

	// A member sees the health but none of the forms, and a forged POST is refused.
	m, mcsrf := e.signIn(e.memberToken)
	if _, page = e.do(m, "GET", path, nil); strings.Contains(page, "<h2>Settings</h2>") || strings.Contains(page, ">Recover</button>") || strings.Contains(page, ">Re-enable</button>") {
		t.Fatalf("member sees manager forms:\n%s", page)
	}
	if res, _ := e.do(m, "POST", "/console/endpoints/"+ep.ID.String()+"/settings", url.Values{"csrf": {mcsrf}, "rate_limit": {"1"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("member's forged settings: %d", res.StatusCode)
	}
}

// An endpoint's page shows a member the names of its custom headers, never their values; its owner
// reads and edits the values.
func TestAMemberSeesHeaderNamesButNeverTheirValues(t *testing.T) {
	e := newEnv(t)
	c, csrf := e.signIn(e.ownerToken)
	e.do(c, "POST", "/console/webhooks", url.Values{"csrf": {csrf}, "url": {"https://127.0.0.1/h"}, "events": {"order.created"}})
	var ep models.Endpoint
	e.db.Take(&ep)
	path := "/console/webhooks/" + ep.ID.String()
	if res, _ := e.do(c, "POST", "/console/endpoints/"+ep.ID.String()+"/settings", url.Values{"csrf": {csrf}, "rate_limit": {""},
		"headers": {"Authorization: Bearer SUPERSECRET\nX-Tenant: acme-tenant"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("settings: %d", res.StatusCode)
	}
	if _, page := e.do(c, "GET", path, nil); !strings.Contains(page, "Authorization: Bearer SUPERSECRET\nX-Tenant: acme-tenant</textarea>") {
		t.Fatalf("the owner does not read the values:\n%s", page)
	}
	m, _ := e.signIn(e.memberToken)
	_, page := e.do(m, "GET", path, nil)
	if strings.Contains(page, "SUPERSECRET") || strings.Contains(page, "acme-tenant") {
		t.Fatalf("a member reads a header value:\n%s", page)
	}
	if !strings.Contains(page, `<code class="header-name">Authorization</code>`) || !strings.Contains(page, `<code class="header-name">X-Tenant</code>`) {
		t.Fatalf("a member does not see the header names:\n%s", page)
	}
}
