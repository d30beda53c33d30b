package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/dev/deliverytest"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/models"
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
		_, err := endpoints.RecordAttempt(ctx, e.db, &models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: ev, EndpointID: ep.ID, EventType: "order.created", ChainID: uuid.New(),
			WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: "dropped", ResponseStatus: &code, Error: "HTTP 503", AttemptedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
	}
	path := "/console/webhooks/" + ep.ID.String()
	c, csrf := e.signIn(e.ownerToken)
	res, page := e.do(c, "GET", path, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "<h2>Health</h2>") || !strings.Contains(page, "<td>3</td><td>0</td><td>3</td>") {
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
	if saved.RateLimit == nil || *saved.RateLimit != 20 || saved.Headers["X-Tenant"] != "acme" || saved.Headers["Authorization"] != "Bearer tok" {
		t.Fatalf("saved %+v", saved)
	}

	// Recover: the count first, then the recovery and its progress.
	since := time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04")
	_, page = e.do(c, "GET", path+"?recover_since="+url.QueryEscape(since), nil)
	if !strings.Contains(page, "This re-fires <strong>3</strong> dropped chain(s).") {
		t.Fatalf("preview:\n%s", page)
	}
	res, _ = e.do(c, "POST", "/console/endpoints/"+ep.ID.String()+"/recover", url.Values{"csrf": {csrf}, "since": {since}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != path+"?done=recovering" {
		t.Fatalf("recover: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, page = e.do(c, "GET", path, nil)
	if !strings.Contains(page, `class="st-running">running</strong>, 0 of 3 chains started`) {
		t.Fatalf("progress:\n%s", page)
	}
	res, page = e.do(c, "POST", "/console/endpoints/"+ep.ID.String()+"/recover", url.Values{"csrf": {csrf}, "since": {since}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(page, "<code>recovery_in_progress</code>") {
		t.Fatalf("second recovery: %d\n%s", res.StatusCode, page)
	}
	var rec models.Recovery
	e.db.Where("endpoint_id = ?", ep.ID).Take(&rec)
	res, _ = e.do(c, "POST", "/console/recoveries/"+rec.ID.String()+"/cancel", url.Values{"csrf": {csrf}, "endpoint": {ep.ID.String()}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", res.StatusCode)
	}
	if _, page = e.do(c, "GET", path, nil); !strings.Contains(page, `class="st-cancelled">cancelled</strong>`) {
		t.Fatalf("after cancel:\n%s", page)
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
