package endpoints_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/internal/events"
	"wds/internal/recovery"
	"wds/models"
	"wds/worker"
	"wds/workflows/contract"
)

// health is the endpoint's health as the list shows it.
func (f *fixture) health(id uuid.UUID) models.EndpointHealth {
	f.T.Helper()
	list, err := f.Svc.List(f.Ctx, f.Org, nil)
	if err != nil {
		f.T.Fatal(err)
	}
	for _, ep := range list {
		if ep.ID == id {
			return *ep.Health
		}
	}
	f.T.Fatalf("endpoint %s not listed", id)
	return models.EndpointHealth{}
}

// dispatched marks events as their relay does, so a resend finds no chain in progress.
func (f *fixture) dispatched(ids ...uuid.UUID) {
	f.T.Helper()
	if err := f.DB.Exec("UPDATE events SET dispatched_at = now() WHERE id IN ?", ids).Error; err != nil {
		f.T.Fatal(err)
	}
}

// The endpoint remembers its drops until a later chain of the same event reaches for it: a success
// ends the failure streak but not them; a resend, a re-fire and the retention job's delete do; a
// re-fired chain that drops again counts again; chains a disable drops count; test events do not.
func TestUnrecoveredDropsStayUntilALaterChainOfTheirEvent(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	first, second, third := f.Event(events.OrderCreated, nil), f.Event(events.OrderCreated, nil), f.Event(events.OrderCreated, nil)
	f.dispatched(first, second, third)
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	check := func(step string, n int64, oldest *time.Time) {
		t.Helper()
		h := f.health(ep.ID)
		if h.UnrecoveredDropped != n || (oldest == nil) != (h.OldestUnrecoveredAt == nil) ||
			(oldest != nil && !oldest.Equal(*h.OldestUnrecoveredAt)) {
			t.Fatalf("%s: %d unrecovered, oldest %v; want %d, %v", step, h.UnrecoveredDropped, h.OldestUnrecoveredAt, n, oldest)
		}
	}
	check("a new endpoint", 0, nil)
	f.Delivery(first, ep.ID, 1, models.StatusDropped, base)
	f.Delivery(second, ep.ID, 1, models.StatusDropped, base.Add(time.Minute))
	at := base
	check("two drops", 2, &at)
	f.Delivery(third, ep.ID, 1, models.StatusSucceeded, base.Add(2*time.Minute))
	if h := f.health(ep.ID); h.ConsecutiveDropped != 0 || h.UnrecoveredDropped != 2 {
		t.Fatalf("a success ended the drops: %+v", h)
	}
	if _, err := f.Resends.Resend(f.Ctx, first, f.Owner, &ep.ID); err != nil {
		t.Fatal(err)
	}
	at = base.Add(time.Minute)
	check("the first event resent", 1, &at)
	var secondDrop models.Delivery
	f.DB.Where("event_id = ? AND status = 'dropped'", second).Take(&secondDrop)
	if _, err := f.Resends.Refire(f.Ctx, secondDrop.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	check("the second re-fired", 0, nil)

	again := f.Delivery(second, ep.ID, 1, models.StatusDropped, base.Add(3*time.Minute))
	at = again.AttemptedAt
	check("the re-fired chain dropped again", 1, &at)
	test := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: f.Event(events.WebhookTest, nil), EndpointID: ep.ID,
		EventType: events.WebhookTest, ChainID: uuid.New(), WorkflowID: "webhook-test/x", Attempt: 1, Status: models.StatusDropped,
		AttemptedAt: base.Add(4 * time.Minute)}
	if _, err := delivery.RecordAttempt(f.Ctx, f.DB, &test); err != nil {
		t.Fatal(err)
	}
	check("a test event's drop", 1, &at)
	waiting := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: third, EndpointID: ep.ID, EventType: events.OrderCreated,
		ChainID: uuid.New(), WorkflowID: "webhook-resend/x", Attempt: 1, Status: models.StatusFailed,
		AttemptedAt: base.Add(5 * time.Minute), NextAttemptAt: ptrTo(time.Now().Add(time.Hour))}
	if _, err := delivery.RecordAttempt(f.Ctx, f.DB, &waiting); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Disable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	check("a waiting chain dropped by the disable", 2, &at)
	if _, err := f.Svc.Enable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	check("the enable", 2, &at)

	// The retention job deletes the attempts older than its cutoff: the drops it deletes are gone.
	if _, err := worker.Prune(f.Ctx, f.DB, base.Add(4*time.Minute), 100); err != nil {
		t.Fatal(err)
	}
	at = waiting.AttemptedAt
	check("the retention deleted the older drops", 1, &at)
}

func ptrTo[T any](v T) *T { return &v }

// Resend, then recover, sends once: of five drops, one resent and one re-fired by hand are skipped
// (the count says so before and the recovery after), the other three are re-fired; a second
// recovery finds nothing, completes as it is asked for, and does not hide the first as the
// endpoint's latest.
func TestARecoverySkipsChainsWhoseEventWentAgain(t *testing.T) {
	f := newFixture(t)
	ep := f.LimitedEndpoint(100)
	drops := f.DropChains(ep.ID, 5)
	var resent models.Delivery
	f.DB.Where("id = ?", drops[1]).Take(&resent)
	if _, err := f.Resends.Resend(f.Ctx, resent.EventID, f.Owner, &ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Resends.Refire(f.Ctx, drops[3], f.Owner); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Hour)
	n, err := f.Recoveries.CountRecoverable(f.Ctx, ep.ID, &f.Owner, since, nil)
	if err != nil || n != (recovery.RecoveryCount{Recoverable: 3, Skipped: 2}) {
		t.Fatalf("count %+v %v, want 3 to re-fire and 2 skipped", n, err)
	}
	rec, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, since, nil)
	if err != nil || rec.Total != 3 || rec.Skipped != 2 || !rec.Running() {
		t.Fatalf("recover %+v %v", rec, err)
	}
	for {
		b, _, err := delivery.NextRecoveryBatch(f.Ctx, f.DB, contract.RecoveryParams{RecoveryID: rec.ID}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if b.Done {
			break
		}
	}
	var chains []struct {
		EventID uuid.UUID
		N       int
	}
	f.DB.Raw("SELECT event_id, count(*) AS n FROM webhook_dispatches WHERE endpoint_id = ? GROUP BY event_id", ep.ID).Scan(&chains)
	if len(chains) != 5 {
		t.Fatalf("chains queued for %d events, want every one of the five once: %+v", len(chains), chains)
	}
	for _, c := range chains {
		if c.N != 1 {
			t.Fatalf("event %s went to the endpoint again %d times", c.EventID, c.N)
		}
	}
	again, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, since, nil)
	if err != nil || again.Total != 0 || again.Skipped != 5 || again.Status != models.RecoveryCompleted || again.FinishedAt == nil {
		t.Fatalf("a recovery with nothing to do: %+v %v", again, err)
	}
	latest, err := f.Recoveries.LatestRecovery(f.Ctx, ep.ID)
	if err != nil || latest == nil || latest.ID != rec.ID {
		t.Fatalf("the latest recovery is %+v, want the one that started chains (%s)", latest, rec.ID)
	}
}
