package migrations_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/migrations"
	"wds/models"
	"wds/test/deliverytest"
)

// 00034 counts the last 8 days of the log into the minutes the overview now reads (the drops, the
// re-fired chains' first attempts, the drops re-fired since, each minute's org), and a previous
// release's binary, which counts a minute without its org, still writes: the org is filled in.
func TestMinutesAreBackfilledForTheOverview(t *testing.T) {
	f := deliverytest.NewFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	ev := f.Event(events.OrderCreated, nil)
	now := time.Now().UTC().Truncate(time.Minute)
	dropped := uuid.New()
	sqlDB, _ := f.DB.DB()
	err := migrations.Between(f.Ctx, sqlDB, 33, 34, func() error {
		for _, r := range []struct {
			id       uuid.UUID
			workflow string
			status   models.Status
			at       time.Time
		}{
			{dropped, "webhook-event/x", "dropped", now.Add(-2 * time.Hour)},
			{uuid.New(), "webhook-event/x", "failed", now.Add(-2 * time.Hour)},
			{uuid.New(), "webhook-refire/a/b/1", "succeeded", now.Add(-time.Hour)},
			{uuid.New(), "webhook-event/x", "succeeded", now.Add(-10 * 24 * time.Hour)}, // beyond the 8 days
		} {
			err := f.DB.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
				VALUES (?, ?, ?, ?, 'order.created', ?, ?, 1, ?, ?)`, r.id, f.Org, ev, ep.ID, uuid.New(), r.workflow, r.status, r.at).Error
			if err != nil {
				return err
			}
		}
		return f.DB.Exec(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id, refired_delivery_id)
			VALUES (?, ?, 'refire', 'webhook-refire/a/b/1', ?, ?, ?, ?)`, uuid.New(), f.Org, ev, ep.ID, uuid.New(), dropped).Error
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []models.EndpointMinute
	f.DB.Order("minute").Find(&got)
	want := []models.EndpointMinute{
		{EndpointID: ep.ID, OrgID: f.Org, Minute: now.Add(-2 * time.Hour), Failed: 2, Dropped: 1, DroppedRefired: 1},
		{EndpointID: ep.ID, OrgID: f.Org, Minute: now.Add(-time.Hour), Succeeded: 1, Refired: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("minutes %+v, want %+v", got, want)
	}
	for i := range want {
		if !got[i].Minute.Equal(want[i].Minute) {
			t.Fatalf("minute %d: %+v, want %+v", i, got[i], want[i])
		}
		got[i].Minute = want[i].Minute
		if got[i] != want[i] {
			t.Errorf("minute %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	// A previous release counts a new minute without naming the org.
	if err := f.DB.Exec(`INSERT INTO webhook_endpoint_minutes (endpoint_id, minute, succeeded, failed) VALUES (?, ?, 1, 0)`, ep.ID, now).Error; err != nil {
		t.Fatalf("a previous release's count of a minute: %v", err)
	}
	var org uuid.UUID
	f.DB.Raw(`SELECT org_id FROM webhook_endpoint_minutes WHERE minute = ?`, now).Row().Scan(&org)
	if org != f.Org {
		t.Errorf("the previous release's minute is of org %s, want %s", org, f.Org)
	}
}
