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

// 00035 finds each endpoint's unrecovered drops in its log: a drop with no later chain of its event
// to the endpoint, whether that chain's queued start is still there or the retention job pruned it
// (its attempts say it ran); test events' drops are not the support desk's.
func TestUnrecoveredDropsAreBackfilledFromTheLog(t *testing.T) {
	f := deliverytest.NewFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	kept, resent, rerun, test := f.Event(events.OrderCreated, nil), f.Event(events.OrderCreated, nil),
		f.Event(events.OrderCreated, nil), f.Event(events.WebhookTest, nil)
	now := time.Now().UTC().Truncate(time.Microsecond)
	row := func(ev uuid.UUID, typ string, status models.Status, at time.Time) error {
		return f.DB.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
			VALUES (?, ?, ?, ?, ?, ?, 'w', 1, ?, ?)`, uuid.New(), f.Org, ev, ep.ID, typ, uuid.New(), status, at).Error
	}
	sqlDB, _ := f.DB.DB()
	err := migrations.Between(f.Ctx, sqlDB, 34, 35, func() error {
		for _, err := range []error{
			row(kept, events.OrderCreated, models.StatusDropped, now.Add(-3*time.Hour)),
			row(resent, events.OrderCreated, models.StatusDropped, now.Add(-4*time.Hour)),
			f.DB.Exec(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id)
				VALUES (?, ?, 'resend', 'webhook-resend/x', ?, ?, ?)`, uuid.New(), f.Org, resent, ep.ID, uuid.New()).Error,
			row(rerun, events.OrderCreated, models.StatusDropped, now.Add(-5*time.Hour)),
			row(rerun, events.OrderCreated, models.StatusSucceeded, now.Add(-2*time.Hour)),
			row(test, events.WebhookTest, models.StatusDropped, now.Add(-6*time.Hour)),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got models.Endpoint
	if err := f.DB.Where("id = ?", ep.ID).Take(&got).Error; err != nil {
		t.Fatal(err)
	}
	if got.UnrecoveredDropped != 1 || got.OldestUnrecoveredAt == nil || !got.OldestUnrecoveredAt.Equal(now.Add(-3*time.Hour)) {
		t.Fatalf("unrecovered %d, oldest %v; want 1 at %v", got.UnrecoveredDropped, got.OldestUnrecoveredAt, now.Add(-3*time.Hour))
	}
}
