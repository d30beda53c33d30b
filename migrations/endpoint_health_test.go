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

// 00025 backfills each endpoint's kept health from its delivery log: the last success, the streak
// of failures after it with its dropped chains, and the minutes of the last day.
func TestEndpointHealthIsBackfilledFromTheLog(t *testing.T) {
	f := deliverytest.NewFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	ev := f.Event(events.OrderCreated, nil)
	now := time.Now().UTC().Truncate(time.Microsecond)
	rows := []struct {
		status models.Status
		ago    time.Duration
	}{{"dropped", 3 * time.Hour}, {"succeeded", 2 * time.Hour}, {"failed", time.Hour}, {"dropped", 30 * time.Minute}, {"dropped", 20 * time.Minute}}
	sqlDB, _ := f.DB.DB()
	err := migrations.Between(f.Ctx, sqlDB, 24, 25, func() error {
		for _, r := range rows {
			err := f.DB.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
				VALUES (?, ?, ?, ?, 'order.created', ?, 'w', 1, ?, ?)`, uuid.New(), f.Org, ev, ep.ID, uuid.New(), r.status, now.Add(-r.ago)).Error
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
	if !got.LastSuccessAt.Equal(now.Add(-2*time.Hour)) || !got.FailingSince.Equal(now.Add(-time.Hour)) || got.ConsecutiveDropped != 2 {
		t.Fatalf("kept health %v %v %d", got.LastSuccessAt, got.FailingSince, got.ConsecutiveDropped)
	}
	var counts struct{ Succeeded, Failed int64 }
	f.DB.Raw("SELECT sum(succeeded) AS succeeded, sum(failed) AS failed FROM webhook_endpoint_minutes WHERE endpoint_id = ?", ep.ID).Scan(&counts)
	if counts.Succeeded != 1 || counts.Failed != 4 {
		t.Fatalf("minutes %+v", counts)
	}
}
