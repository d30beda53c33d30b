package console_test

import (
	"context"
	"regexp"
	"slices"
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

// The overview's latest dropped and failed attempts are one list in time order, newest first, and a
// failed attempt says what became of its chain since: delivered on a later attempt, or dropped and
// re-fired; one whose chain is still retrying says nothing more. Its counts say what they count.
func TestTheOverviewListsProblemsInTimeOrderAndMarksRecoveredChains(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	box, _ := secrets.NewBox(secrets.GenerateKey())
	ep, err := endpoints.NewService(e.db, box, endpoints.Options{AllowPrivate: true}).Create(ctx,
		endpoints.CreateInput{OrgID: e.org.ID, ActorID: e.userOf(e.ownerToken), URL: "https://127.0.0.1/order-hook", EventTypes: []string{events.OrderCreated}})
	if err != nil {
		t.Fatal(err)
	}
	event := uuid.New()
	if err := e.db.Exec(`INSERT INTO events (id, org_id, type, body, dispatched_at) VALUES (?, ?, ?, '{}', now())`,
		event, e.org.ID, events.OrderCreated).Error; err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	record := func(chain uuid.UUID, attempt int, status models.Status, ago time.Duration) uuid.UUID {
		t.Helper()
		answer := 503
		d := models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: event, EndpointID: ep.ID, EventType: events.OrderCreated,
			ChainID: chain, WorkflowID: "webhook-event/" + chain.String(), Attempt: attempt, Status: status,
			ResponseStatus: &answer, Error: "HTTP 503", AttemptedAt: now.Add(-ago)}
		if status == models.StatusSucceeded {
			d.ResponseStatus, d.Error = nil, ""
		}
		if ok, err := delivery.RecordAttempt(ctx, e.db, &d); !ok || err != nil {
			t.Fatalf("record: %v %v", ok, err)
		}
		return d.ID
	}
	healed, refired, retrying := uuid.New(), uuid.New(), uuid.New()
	record(healed, 1, models.StatusFailed, 50*time.Minute)
	record(healed, 2, models.StatusSucceeded, 45*time.Minute)
	record(refired, 1, models.StatusFailed, 30*time.Minute)
	dropped := record(refired, 2, models.StatusDropped, 20*time.Minute)
	record(retrying, 1, models.StatusFailed, 10*time.Minute)
	if err := e.db.Exec(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id, refired_delivery_id)
		VALUES (?, ?, 'refire', 'webhook-refire/x', ?, ?, ?, ?)`, uuid.New(), e.org.ID, event, ep.ID, uuid.New(), dropped).Error; err != nil {
		t.Fatal(err)
	}

	c, _ := e.signIn(e.ownerToken)
	_, page := e.do(c, "GET", "/console/", nil)
	table := page[strings.Index(page, `<table id="latest">`):]
	table = table[:strings.Index(table, "</table>")]
	var when []string
	for _, m := range regexp.MustCompile(`<td class="when">([^<]+)</td>`).FindAllStringSubmatch(table, -1) {
		when = append(when, m[1])
	}
	if len(when) != 4 || !slices.IsSortedFunc(when, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("the latest problems are not newest first: %q", when)
	}
	rows := strings.Split(table, "<tr>")[2:] // the header, then the rows
	want := []string{
		`failed</td>`, // still retrying: nothing more to say
		`dropped <span class="refired">· re-fired (<a`,
		`failed <span class="refired">· dropped, then re-fired (<a`,
		`failed <span class="refired delivered">· delivered on attempt 2</span>`,
	}
	for i, w := range want {
		if i >= len(rows) || !strings.Contains(rows[i], w) {
			t.Errorf("row %d lacks %q:\n%s", i+1, w, table)
		}
	}
	for _, w := range []string{"<b>3</b> failed attempts (retried) and <b>1</b> dropped chain (given up undelivered)", `id="chain-meaning"`} {
		if !strings.Contains(page, w) {
			t.Errorf("the overview lacks %q", w)
		}
	}
}
