package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/platform/secrets"
	"wds/models"
)

// The webhooks list shows each endpoint's health: its success rate over 24 hours, last success,
// since when it fails, its dropped chains, and a mark on one the service disabled for failing.
func TestTheWebhooksListShowsEachEndpointsHealth(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	box, _ := secrets.NewBox(secrets.GenerateKey())
	svc := endpoints.NewService(e.db, box, endpoints.Options{AllowPrivate: true})
	owner := e.userOf(e.ownerToken)
	var eps []uuid.UUID
	for _, u := range []string{"https://127.0.0.1/sick", "https://127.0.0.1/gave-up"} {
		ep, err := svc.Create(ctx, endpoints.CreateInput{OrgID: e.org.ID, ActorID: owner, URL: u, EventTypes: []string{events.OrderCreated}})
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep.ID)
	}
	event := uuid.New()
	if err := e.db.Exec(`INSERT INTO events (id, org_id, type, body, dispatched_at) VALUES (?, ?, ?, '{}', now())`, event, e.org.ID, events.OrderCreated).Error; err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Second).Add(-3 * time.Hour)
	// Written as the attempt's activity writes them, which keeps the endpoint's health with each.
	for i, status := range []models.Status{models.StatusSucceeded, models.StatusFailed, models.StatusDropped} {
		d := &models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: event, EndpointID: eps[0], EventType: events.OrderCreated,
			ChainID: uuid.New(), WorkflowID: "webhook-event/x", Attempt: 1, Status: status, AttemptedAt: at.Add(time.Duration(i) * time.Hour)}
		if _, err := delivery.RecordAttempt(ctx, e.db, d); err != nil {
			t.Fatal(err)
		}
	}
	e.db.Exec(`UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing' WHERE id = ?`, eps[1])
	c, _ := e.signIn(e.ownerToken)
	_, page := e.do(c, "GET", "/console/webhooks", nil)
	for _, want := range []string{"succeeded (24 h): 33% of 3 attempts", "last success: " + at.Format("2006-01-02 15:04:05"),
		"failing since " + at.Add(time.Hour).Format("2006-01-02 15:04:05"), ">1 dropped chain<",
		`<strong class="st-dropped">disabled for failing</strong>`, "succeeded (24 h): no attempts",
		"1 unrecovered drop since " + at.Add(2*time.Hour).Format("2006-01-02 15:04:05")} {
		if !strings.Contains(page, want) {
			t.Errorf("the webhooks list lacks %q:\n%s", want, page)
		}
	}
	// A success after the drop ends the streak, not the unrecovered drop: the endpoint's page and the
	// overview still show it, with a way to count it for a recovery.
	d := &models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: event, EndpointID: eps[0], EventType: events.OrderCreated,
		ChainID: uuid.New(), WorkflowID: "webhook-event/x", Attempt: 1, Status: models.StatusSucceeded, AttemptedAt: at.Add(150 * time.Minute)}
	if _, err := delivery.RecordAttempt(ctx, e.db, d); err != nil {
		t.Fatal(err)
	}
	dropped := at.Add(2 * time.Hour).Format("2006-01-02 15:04:05")
	_, page = e.do(c, "GET", "/console/webhooks/"+eps[0].String(), nil)
	for _, want := range []string{`<td id="unrecovered"><strong class="st-dropped">1</strong>, oldest ` + dropped,
		`?recover_since=` + strings.ReplaceAll(at.Add(2*time.Hour).Format(time.RFC3339Nano), ":", "%3a") + `#recover`} {
		if !strings.Contains(page, want) {
			t.Errorf("the endpoint's page lacks %q:\n%s", want, page)
		}
	}
	_, page = e.do(c, "GET", "/console/", nil)
	if want := `https://127.0.0.1/sick</a>: 1, the oldest dropped ` + dropped; !strings.Contains(page, want) {
		t.Errorf("the overview lacks %q:\n%s", want, page)
	}
}
