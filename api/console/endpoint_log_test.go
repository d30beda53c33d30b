package console_test

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
)

// An endpoint's delivery log is paged 20 attempts at a time, newest first, under its own heading:
// each page links to the next older one and back to the newest, and the pages together hold every
// attempt once. Event and workflow ids show their first 8 characters, the whole id in the title.
func TestTheEndpointLogPagesTwentyAttemptsAtATime(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	box, _ := secrets.NewBox(secrets.GenerateKey())
	ep, err := endpoints.NewService(e.db, box, endpoints.Options{AllowPrivate: true}).Create(ctx,
		endpoints.CreateInput{OrgID: e.org.ID, ActorID: e.userOf(e.ownerToken), URL: "https://127.0.0.1/paged", EventTypes: []string{events.OrderCreated}})
	if err != nil {
		t.Fatal(err)
	}
	event := uuid.New()
	e.db.Exec(`INSERT INTO events (id, org_id, type, body, dispatched_at) VALUES (?, ?, ?, '{}', now())`, event, e.org.ID, events.OrderCreated)
	for i := range 45 {
		if err := e.db.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 1, 'succeeded', ?)`, uuid.New(), e.org.ID, event, ep.ID, events.OrderCreated, uuid.New(),
			"webhook-event/"+event.String(), time.Now().Add(-time.Duration(i)*time.Minute)).Error; err != nil {
			t.Fatal(err)
		}
	}
	c, _ := e.signIn(e.ownerToken)
	row := regexp.MustCompile(`<tr id="delivery-([0-9a-f-]{36})">`)
	older := regexp.MustCompile(`<a href="([^"]+)">Older deliveries →</a>`)
	seen := map[string]bool{}
	path := "/console/webhooks/" + ep.ID.String()
	for i, want := range []int{20, 20, 5} {
		res, page := e.do(c, "GET", path, nil)
		if res.StatusCode != http.StatusOK || !strings.Contains(page, `<h2 id="log">Delivery log</h2>`) {
			t.Fatalf("page %d: %d\n%s", i+1, res.StatusCode, page)
		}
		rows := row.FindAllStringSubmatch(page, -1)
		if len(rows) != want {
			t.Fatalf("page %d holds %d attempts, want %d", i+1, len(rows), want)
		}
		for _, r := range rows {
			if seen[r[1]] {
				t.Fatalf("attempt %s on two pages", r[1])
			}
			seen[r[1]] = true
		}
		if newest := strings.Contains(page, ">← Newest</a>"); newest != (i > 0) {
			t.Errorf("page %d: a link to the newest: %v", i+1, newest)
		}
		// Whole in the markup (a copy takes it) and on hover; the stylesheet shortens it (code.id).
		for _, id := range []string{`<code class="id" title="` + event.String() + `">` + event.String() + `</code>`,
			`<code class="id workflow-id" title="webhook-event/` + event.String() + `">webhook-event/` + event.String() + `</code>`} {
			if !strings.Contains(page, id) {
				t.Errorf("page %d lacks %s", i+1, id)
			}
		}
		m := older.FindStringSubmatch(page)
		if (m != nil) != (i < 2) {
			t.Fatalf("page %d: a link to older deliveries: %v", i+1, m != nil)
		}
		if m != nil {
			path = html.UnescapeString(m[1])
		}
	}
}

// A recovery of another of the operator's orgs is not found from this one, as the APIs answer
// another org's ids.
func TestARecoveryOfAnotherOrgIsNotFound(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ws := workspace.NewService(e.db)
	other, _ := ws.CreateOrg(ctx, "Other")
	owner := e.userOf(e.ownerToken)
	if err := e.db.Exec(`INSERT INTO memberships (org_id, user_id, role) VALUES (?, ?, 'owner')`, other.ID, owner).Error; err != nil {
		t.Fatal(err)
	}
	ep := models.Endpoint{ID: uuid.New(), OrgID: other.ID, URL: "https://127.0.0.1/other", EventTypes: models.TextArray{"order.created"},
		SecretSealed: []byte("x"), Enabled: true, MaxAttempts: 1, CreatedBy: owner}
	if err := e.db.Create(&ep).Error; err != nil {
		t.Fatal(err)
	}
	rec := uuid.New()
	if err := e.db.Exec(`INSERT INTO webhook_recoveries (id, org_id, endpoint_id, since, until, total, workflow_id)
		VALUES (?, ?, ?, now() - interval '1 hour', now(), 0, 'recover-other')`, rec, other.ID, ep.ID).Error; err != nil {
		t.Fatal(err)
	}
	c, _ := e.signIn(e.ownerToken)
	if res, page := e.do(c, "GET", "/console/recoveries/"+rec.String(), nil); res.StatusCode != http.StatusNotFound || strings.Contains(page, "https://127.0.0.1/other") {
		t.Fatalf("another org's recovery: %d\n%s", res.StatusCode, page)
	}
	if res, _ := e.do(c, "GET", "/console/recoveries/not-an-id", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("a recovery that is not an id: %d", res.StatusCode)
	}
}
