package eventsearch_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/delivery"
	"wds/internal/events"
	"wds/internal/eventsearch"
	"wds/models"
)

// An event's detail is one snapshot: a resent chain's first attempt that lands while the detail is
// read (here, between the read of the chains and the read of their attempts) is in both or in
// neither, so a chain's outcome always agrees with the attempts listed under it. Read in two
// snapshots, the page said "in progress" over an attempt that had succeeded.
func TestAnEventsChainsAgreeWithTheirAttempts(t *testing.T) {
	f := newFixture(t)
	// The event before the endpoint: its one chain is the resend's.
	ev := f.Event(events.OrderCreated, map[string]any{"id": "snapshot"})
	ep := f.Endpoint("https://127.0.0.1/hook")
	out, err := f.Resends.Resend(f.Ctx, ev, f.Owner, &ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	resent := out.Chains[0]
	landed := false
	land := func(tx *gorm.DB) {
		if landed || tx.Statement.Table != "webhook_deliveries" {
			return
		}
		landed = true
		d := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: ev, EndpointID: ep.ID, EventType: events.OrderCreated,
			ChainID: resent.ChainID, WorkflowID: resent.WorkflowID, Attempt: 1, Status: models.StatusSucceeded, AttemptedAt: time.Now()}
		if ok, err := delivery.RecordAttempt(f.Ctx, f.DB, &d); !ok || err != nil {
			t.Errorf("the attempt landing: %v %v", ok, err)
		}
	}
	if err := f.DB.Callback().Query().Before("gorm:query").Register("test:attempt_lands", land); err != nil {
		t.Fatal(err)
	}
	detail, err := f.Events.Event(f.Ctx, ev, &f.Owner)
	if err != nil {
		t.Fatal(err)
	}
	if !landed {
		t.Fatal("the attempt did not land while the event was read")
	}
	for _, ch := range detail.Chains {
		if ch.ChainID != resent.ChainID {
			continue
		}
		last := eventsearch.OutcomeInProgress
		if n := len(ch.Attempts); n > 0 {
			last = eventsearch.Outcome(ch.Attempts[n-1].Status)
		}
		if ch.Outcome != last {
			t.Fatalf("the resent chain reads %s over %d attempts ending %s", ch.Outcome, len(ch.Attempts), last)
		}
		if detail.Outcome != ch.Outcome {
			t.Fatalf("the event reads %s, its one chain %s", detail.Outcome, ch.Outcome)
		}
		return
	}
	t.Fatalf("the resent chain %s is not among the event's chains", resent.ChainID)
}
