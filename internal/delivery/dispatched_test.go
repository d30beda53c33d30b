package delivery_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/models"
)

// An event's first attempt marks it dispatched in the update that keeps its outcome, so the
// starter's mark after its start finds it marked and writes nothing; a re-fire or resend queued for
// an event not yet started (written here as a resend's is) does not mark it: the event's own start is still to come.
func TestAnEventsFirstAttemptMarksItDispatched(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	started, waiting := f.Event(events.OrderCreated, nil), f.Event(events.OrderCreated, nil)
	state := func(ev uuid.UUID) (dispatched *time.Time, outcome string) {
		t.Helper()
		var row struct {
			DispatchedAt *time.Time
			Outcome      string
		}
		if err := f.DB.Raw(`SELECT dispatched_at, outcome FROM event_states WHERE event_id = ?`, ev).Scan(&row).Error; err != nil {
			t.Fatal(err)
		}
		return row.DispatchedAt, row.Outcome
	}
	if at, _ := state(started); at != nil {
		t.Fatalf("written dispatched at %v", at)
	}
	f.Delivery(started, ep.ID, 1, models.StatusSucceeded, time.Now())
	at, outcome := state(started)
	if at == nil || outcome != "succeeded" {
		t.Fatalf("after the first attempt: dispatched at %v, outcome %s", at, outcome)
	}
	f.Delivery(started, ep.ID, 1, models.StatusSucceeded, time.Now())
	if again, _ := state(started); !again.Equal(*at) {
		t.Fatalf("a later attempt moved dispatched_at from %v to %v", at, again)
	}
	err := f.DB.Exec(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id)
		VALUES (?, ?, 'resend', ?, ?, ?, ?)`, uuid.New(), f.Org, "webhook-resend/"+uuid.NewString(), waiting, ep.ID, uuid.New()).Error
	if err != nil {
		t.Fatal(err)
	}
	if at, outcome := state(waiting); at != nil || outcome != "in_progress" {
		t.Fatalf("a queued resend: dispatched at %v, outcome %s", at, outcome)
	}
}
