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

// The overview reads as a person writes: one endpoint is "1 enabled webhook endpoint", and a dropped
// delivery answered 500 shows its answer once ("500 Internal Server Error"), not "HTTP 500 HTTP 500".
func TestTheOverviewCountsInWordsAndShowsEachAnswerOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	box, _ := secrets.NewBox(secrets.GenerateKey())
	owner := e.userOf(e.ownerToken)
	ep, err := endpoints.NewService(e.db, box, endpoints.Options{AllowPrivate: true}).Create(ctx,
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
	if n := strings.Count(page, "500 Internal Server Error") + strings.Count(page, "HTTP 500"); n != 1 {
		t.Errorf("the answer 500 shows %d times, want once:\n%s", n, page)
	}
}

// The overview draws the deliveries of the last 24 hours and 7 days and each endpoint's success
// rate as inline SVG (no script), and its latest dropped deliveries name the endpoint by URL, link
// the event's page and mark one a recovery re-fired.
func TestTheOverviewChartsDeliveriesAndMarksRecoveredDrops(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	box, _ := secrets.NewBox(secrets.GenerateKey())
	owner := e.userOf(e.ownerToken)
	ep, err := endpoints.NewService(e.db, box, endpoints.Options{AllowPrivate: true}).Create(ctx,
		endpoints.CreateInput{OrgID: e.org.ID, ActorID: owner, URL: "https://127.0.0.1/chart-hook", EventTypes: []string{events.OrderCreated}})
	if err != nil {
		t.Fatal(err)
	}
	event, dropped := uuid.New(), uuid.New()
	exec := func(sql string, args ...any) {
		t.Helper()
		if err := e.db.Exec(sql, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO events (id, org_id, type, body, dispatched_at) VALUES (?, ?, ?, '{}', now())`, event, e.org.ID, events.OrderCreated)
	// Recorded as the worker records attempts, which counts them in their minutes for the charts.
	insert := func(id uuid.UUID, workflow, status string, attempt int, at time.Time) {
		t.Helper()
		answer := 503
		d := models.Delivery{ID: id, OrgID: e.org.ID, EventID: event, EndpointID: ep.ID, EventType: events.OrderCreated,
			ChainID: uuid.New(), WorkflowID: workflow, Attempt: attempt, Status: models.Status(status),
			ResponseStatus: &answer, Error: "HTTP 503", AttemptedAt: at}
		if ok, err := delivery.RecordAttempt(ctx, e.db, &d); !ok || err != nil {
			t.Fatalf("record: %v %v", ok, err)
		}
	}
	now := time.Now()
	insert(uuid.New(), "webhook-event/a", "failed", 1, now.Add(-3*time.Hour))
	insert(dropped, "webhook-event/a", "dropped", 2, now.Add(-2*time.Hour))
	insert(uuid.New(), "webhook-recovery/a/b/1", "succeeded", 1, now.Add(-time.Hour))
	insert(uuid.New(), "webhook-event/b", "succeeded", 1, now.Add(-72*time.Hour))
	rec := uuid.New()
	exec(`INSERT INTO webhook_recoveries (id, org_id, endpoint_id, since, until, status, total, started, workflow_id)
		VALUES (?, ?, ?, now() - interval '1 day', now(), 'completed', 1, 1, 'recover-x')`, rec, e.org.ID, ep.ID)
	exec(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id, refired_delivery_id, recovery_id)
		VALUES (?, ?, 'recovery', 'webhook-recovery/a/b/1', ?, ?, ?, ?, ?)`, uuid.New(), e.org.ID, event, ep.ID, uuid.New(), dropped, rec)

	c, _ := e.signIn(e.ownerToken)
	_, page := e.do(c, "GET", "/console/", nil)
	for _, want := range []string{
		`aria-label="Deliveries, last 24 hours, by hour (UTC)"`, `aria-label="Deliveries, last 7 days, by day (UTC)"`,
		// the 24 hours: the failed, dropped and recovered attempts; the 7 days: the older success too
		": 0 succeeded, 1 failed, 0 dropped, 0 re-fired</title>", ": 1 succeeded, 0 failed, 0 dropped, 1 re-fired</title>",
		": 1 succeeded, 0 failed, 0 dropped, 0 re-fired</title>",
		"https://127.0.0.1/chart-hook: 2 of 4 attempts succeeded</title>", ">50%</text>",
		`href="/console/events/` + event.String() + `"`, `>https:<wbr>/<wbr>/<wbr>127.<wbr>0.<wbr>0.<wbr>1/<wbr>chart-<wbr>hook</a>`,
		`dropped <span class="refired">· <a class="recovery" href="/console/recoveries/` + rec.String() + `">recovered</a> (<a`,
		"(1 of the dropped since re-fired or recovered)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the overview lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "style=") {
		t.Errorf("the overview needs a script or an inline style, which the CSP refuses")
	}
}
