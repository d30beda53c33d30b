package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/platform/secrets"
)

// The overview reads as a person writes: one endpoint is "1 enabled webhook endpoint", and a dropped
// delivery answered 500 shows its answer once ("500 Internal Server Error"), not "HTTP 500 HTTP 500".
func TestTheOverviewCountsInWordsAndShowsEachAnswerOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	box, _ := secrets.NewBox(secrets.GenerateKey())
	owner := e.userOf(e.ownerToken)
	ep, err := (&endpoints.Service{DB: e.db, Box: box, AllowPrivate: true}).Create(ctx,
		endpoints.CreateInput{OrgID: e.org.ID, ActorID: owner, URL: "https://127.0.0.1/hook", EventTypes: []string{events.OrderCreated}})
	if err != nil {
		t.Fatal(err)
	}
	event := uuid.New()
	if err := e.db.Exec(`INSERT INTO events (id, org_id, type, body, dispatched_at) VALUES (?, ?, ?, '{}', now())`,
		event, e.org.ID, events.OrderCreated).Error; err != nil {
		t.Fatal(err)
	}
	if err := e.db.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id,
		attempt, status, response_status, error, attempted_at) VALUES (?, ?, ?, ?, ?, ?, 'webhook-event/x', 1, 'dropped', 500, 'HTTP 500', ?)`,
		uuid.New(), e.org.ID, event, ep.ID, events.OrderCreated, uuid.New(), time.Now()).Error; err != nil {
		t.Fatal(err)
	}
	c, _ := e.signIn(e.ownerToken)
	_, page := e.do(c, "GET", "/console/", nil)
	for _, want := range []string{"<b>1</b> enabled webhook endpoint<", "<b>0</b> read keys<", "500 Internal Server Error"} {
		if !strings.Contains(page, want) {
			t.Errorf("the overview lacks %q", want)
		}
	}
	if strings.Count(page, "500") != 1 {
		t.Errorf("the answer 500 shows %d times, want once:\n%s", strings.Count(page, "500"), page)
	}
}
