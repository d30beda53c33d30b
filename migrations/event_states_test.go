package migrations_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/outbox"
	"wds/migrations"
	"wds/models"
	"wds/test/deliverytest"
)

// statesApart counts the events whose state row is missing or differs from the event's own columns,
// and the state rows of no event.
func statesApart(t *testing.T, f *deliverytest.Fixture) int64 {
	t.Helper()
	var n int64
	err := f.DB.Raw(`SELECT count(*) FROM events e FULL JOIN event_states s ON s.event_id = e.id
		WHERE e.id IS NULL OR s.event_id IS NULL
			OR (e.org_id, e.created_at, e.type <> 'webhook.test', e.outcome, e.chains_total, e.dispatched_at)
				IS DISTINCT FROM (s.org_id, s.created_at, s.listed, s.outcome, s.chains_total, s.dispatched_at)`).Scan(&n).Error
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// rowVersions names the version of every event row (its xmin, the transaction that wrote it), in
// id order: it changes when anything rewrites one.
func rowVersions(t *testing.T, f *deliverytest.Fixture) string {
	t.Helper()
	var v string
	if err := f.DB.Raw(`SELECT coalesce(string_agg(xmin::text, ',' ORDER BY id), '') FROM events`).Scan(&v).Error; err != nil {
		t.Fatal(err)
	}
	return v
}

// stateOf is an event's state row.
func stateOf(t *testing.T, f *deliverytest.Fixture, ev uuid.UUID) models.EventState {
	t.Helper()
	var s models.EventState
	if err := f.DB.Where("event_id = ?", ev).Take(&s).Error; err != nil {
		t.Fatalf("state of %s: %v", ev, err)
	}
	return s
}

// An event's state row follows every write that changes it: the outbox's insert (an event nothing
// receives is written dispatched), the relay's mark, an attempt's row and a queued re-fire (00049),
// and since 00050 none of them but the insert writes the event's own row; the retention job's delete
// takes the state row with the event.
func TestEventStatesFollowEveryWriteOfTheEvent(t *testing.T) {
	f := deliverytest.NewFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	targeted, marked := f.Event(events.OrderCreated, nil), f.Event(events.OrderCreated, nil)
	unheard, test := f.Event(events.ClientCreated, nil), f.Event(events.WebhookTest, nil)

	if s := stateOf(t, f, targeted); s.Outcome != "in_progress" || s.DispatchedAt != nil || !s.Listed || s.OrgID != f.Org {
		t.Errorf("a targeted event's state as written: %+v", s)
	}
	if s := stateOf(t, f, unheard); s.Outcome != "no_endpoints" || s.DispatchedAt == nil {
		t.Errorf("an event nothing receives: %+v, want no_endpoints and dispatched", s)
	}
	if s := stateOf(t, f, test); s.Listed {
		t.Errorf("a webhook test's state is listed: %+v", s)
	}

	if err := f.DB.Exec(outbox.Events.Mark, []uuid.UUID{marked}).Error; err != nil {
		t.Fatal(err)
	}
	if s := stateOf(t, f, marked); s.DispatchedAt == nil || s.Outcome != "no_endpoints" {
		t.Errorf("after the relay's mark, before an attempt: %+v, want dispatched with no endpoints", s)
	}

	written := rowVersions(t, f)
	f.Delivery(targeted, ep.ID, 1, models.StatusFailed, time.Now())
	if s := stateOf(t, f, targeted); s.Outcome != "in_progress" || s.ChainsTotal != 1 || s.DispatchedAt == nil {
		t.Errorf("after a failed first attempt: %+v, want in progress, one chain, dispatched", s)
	}
	f.Delivery(targeted, ep.ID, 1, models.StatusSucceeded, time.Now())
	if s := stateOf(t, f, targeted); s.Outcome != "succeeded" || s.ChainsTotal != 2 {
		t.Errorf("after a second chain: %+v, want succeeded (the endpoint's latest chain) over two chains", s)
	}
	if after := rowVersions(t, f); after != written {
		t.Errorf("the attempts rewrote event rows: their versions went from %q to %q", written, after)
	}

	if err := f.DB.Exec(`DELETE FROM webhook_deliveries`).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := outbox.Prune(f.Ctx, f.DB, time.Now().Add(time.Hour), 10); err != nil {
		t.Fatal(err)
	}
	var left int64
	if err := f.DB.Raw(`SELECT count(*) FROM event_states`).Scan(&left).Error; err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d state rows left after their events were pruned", left)
	}
}

// 00049 copies the state of the events written before it, and its Down drops the table and its
// triggers, so events are written again without it.
func TestEventStatesAreBackfilled(t *testing.T) {
	f := deliverytest.NewFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	var written []uuid.UUID
	sqlDB, _ := f.DB.DB()
	err := migrations.Between(f.Ctx, sqlDB, 48, 49, func() error {
		written = append(written, f.Event(events.OrderCreated, nil), f.Event(events.ClientCreated, nil), f.Event(events.WebhookTest, nil))
		f.Delivery(written[0], ep.ID, 1, models.StatusDropped, time.Now())
		var tables int64
		if err := f.DB.Raw(`SELECT count(*) FROM pg_tables WHERE tablename = 'event_states'`).Scan(&tables).Error; err != nil {
			return err
		}
		if tables != 0 {
			t.Error("event_states is still there after the Down")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := stateOf(t, f, written[0]); s.Outcome != "dropped" || s.ChainsTotal != 1 || s.DispatchedAt == nil {
		t.Errorf("a dropped event's backfilled state: %+v", s)
	}
	if n := statesApart(t, f); n != 0 {
		t.Errorf("%d backfilled state rows differ from their events", n)
	}
}

// A relay of the release before 00050 still marks the event's own row: the copy carries the mark to
// the state row, which then takes the outcome of an event dispatched with no chain yet.
func TestAPreviousReleaseRelayMarkReachesTheState(t *testing.T) {
	f := deliverytest.NewFixture(t)
	f.Endpoint("https://127.0.0.1/hook")
	ev := f.Event(events.OrderCreated, nil)
	previousMark := `UPDATE events SET dispatched_at = clock_timestamp() WHERE id IN (
		SELECT id FROM events WHERE id IN ? AND dispatched_at IS NULL ORDER BY id FOR NO KEY UPDATE) AND dispatched_at IS NULL`
	if err := f.DB.Exec(previousMark, []uuid.UUID{ev}).Error; err != nil {
		t.Fatal(err)
	}
	if s := stateOf(t, f, ev); s.DispatchedAt == nil || s.Outcome != "no_endpoints" || s.ChainsTotal != 0 {
		t.Errorf("after the previous release's mark: %+v, want dispatched with no endpoints", s)
	}
	var eventAt, stateAt time.Time
	if err := f.DB.Raw(`SELECT e.dispatched_at, s.dispatched_at FROM events e JOIN event_states s ON s.event_id = e.id
		WHERE e.id = ?`, ev).Row().Scan(&eventAt, &stateAt); err != nil {
		t.Fatal(err)
	}
	if !eventAt.Equal(stateAt) {
		t.Errorf("the state's dispatch time %v is not the mark's %v", stateAt, eventAt)
	}
}

// 00050's Down puts back the event's own columns from the state rows the release wrote alone, so
// the release before it reads them as they are.
func TestEventStatesWrittenDownRestoresTheEventColumns(t *testing.T) {
	f := deliverytest.NewFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	ev := f.Event(events.OrderCreated, nil)
	f.Delivery(ev, ep.ID, 1, models.StatusDropped, time.Now())
	if n := statesApart(t, f); n != 1 {
		t.Fatalf("%d state rows differ from their events after an attempt, want the attempted one", n)
	}
	sqlDB, _ := f.DB.DB()
	err := migrations.Between(f.Ctx, sqlDB, 49, 50, func() error {
		if n := statesApart(t, f); n != 0 {
			t.Errorf("after the Down %d state rows differ from their events", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
