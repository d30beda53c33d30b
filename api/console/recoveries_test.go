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

// A recovery's page says what it delivered: of its started chains, how many succeeded, still retry
// and dropped again, listing the last two with links to their events; /console/recoveries lists every
// recovery, the running one first, with the same counts, and the nav leads there.
func TestARecoverysPageSaysWhatItDelivered(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := e.userOf(e.ownerToken)
	box, _ := secrets.NewBox(secrets.GenerateKey())
	svc := endpoints.NewService(e.db, box, endpoints.Options{AllowPrivate: true})
	ep, err := svc.Create(ctx, endpoints.CreateInput{OrgID: e.org.ID, ActorID: owner, URL: "https://127.0.0.1/recovered", EventTypes: []string{events.OrderCreated}})
	if err != nil {
		t.Fatal(err)
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if err := e.db.Exec(sql, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	running, done := uuid.New(), uuid.New()
	exec(`INSERT INTO webhook_recoveries (id, org_id, endpoint_id, since, until, status, total, started, workflow_id, created_at)
		VALUES (?, ?, ?, now() - interval '1 day', now(), 'completed', 3, 3, 'recover-done', now() - interval '1 hour'),
		       (?, ?, ?, now() - interval '1 day', now(), 'running', 5, 0, 'recover-running', now() - interval '2 hours')`,
		done, e.org.ID, ep.ID, running, e.org.ID, ep.ID)
	var evs []uuid.UUID
	for i, status := range []models.Status{models.StatusSucceeded, models.StatusDropped, models.StatusFailed} {
		ev, chain := uuid.New(), uuid.New()
		evs = append(evs, ev)
		exec(`INSERT INTO events (id, org_id, type, body, dispatched_at) VALUES (?, ?, ?, '{}', now())`, ev, e.org.ID, events.OrderCreated)
		workflow := "webhook-recovery/" + ev.String() + "/" + ep.ID.String() + "/1"
		exec(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id, recovery_id, dispatched_at, created_at)
			VALUES (?, ?, 'recovery', ?, ?, ?, ?, ?, now(), now() - ? * interval '1 minute')`, uuid.New(), e.org.ID, workflow, ev, ep.ID, chain, done, 10-i)
		var next *time.Time
		if status == models.StatusFailed {
			later := time.Now().Add(time.Hour)
			next = &later
		}
		d := models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: ev, EndpointID: ep.ID, EventType: events.OrderCreated,
			ChainID: chain, WorkflowID: workflow, Attempt: 1, Status: status, AttemptedAt: time.Now(), NextAttemptAt: next}
		if _, err := delivery.RecordAttempt(ctx, e.db, &d); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := e.signIn(e.memberToken)
	_, page := e.do(c, "GET", "/console/recoveries/"+done.String(), nil)
	for _, want := range []string{`Of the 3 chains started: <strong class="st-succeeded">1 delivered</strong>, <strong class="st-failed">1 still retrying</strong>, <strong class="st-dropped">1 dropped again</strong>`,
		`href="/console/events/` + evs[1].String() + `"`, `href="/console/events/` + evs[2].String() + `"`, `<td class="st-dropped">dropped again</td>`,
		`<td class="st-failed">retrying</td>`, `<a href="/console/recoveries" aria-current="page">Recoveries</a>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the recovery's page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, `href="/console/events/`+evs[0].String()+`"`) {
		t.Errorf("the recovery's page lists a delivered chain among those not delivered:\n%s", page)
	}
	_, page = e.do(c, "GET", "/console/recoveries", nil)
	first, second := strings.Index(page, `id="recovery-`+running.String()), strings.Index(page, `id="recovery-`+done.String())
	if first < 0 || second < first {
		t.Fatalf("the recoveries page does not list the running one first:\n%s", page)
	}
	if want := "<td>3 of 3</td><td>1</td><td>1</td><td>1</td><td>0</td>"; !strings.Contains(page, want) {
		t.Errorf("the recoveries page lacks %q:\n%s", want, page)
	}
}
