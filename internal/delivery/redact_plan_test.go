package delivery_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/delivery"
	"wds/internal/events"
	"wds/models"
	"wds/test/pgtest"
)

// seedLog writes n attempts to the endpoint, each with an answer, over four event types and the
// three statuses (drops rare), one a second, directly: the plans are the point, not the events.
func seedLog(t *testing.T, db *gorm.DB, org, endpointID uuid.UUID, n int) {
	t.Helper()
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL session_replication_role = replica").Error; err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt,
				status, response_excerpt, attempted_at)
			SELECT gen_random_uuid(), @org, gen_random_uuid(), @ep,
				(ARRAY['order.created','payment.recorded','order.shipped','vendor.updated'])[1 + i % 4], gen_random_uuid(), 'w', 1,
				CASE WHEN i % 1001 = 0 THEN 'dropped' WHEN i % 37 = 0 THEN 'failed' ELSE 'succeeded' END, 'ok',
				now() - i * interval '1 second'
			FROM generate_series(1, @n) i`, map[string]any{"org": org, "ep": endpointID, "n": n}).Error
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("ANALYZE webhook_deliveries").Error; err != nil {
		t.Fatal(err)
	}
}

// Redacting stored answers walks each of the endpoint's (event type, status) ranges of its log's
// index newest first, a batch at a time: no sort, nothing read to be thrown away, the same at the
// first batch and deep in a busy endpoint's log.
func TestRedactingStoredAnswersWalksTheEndpointsRanges(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	seedLog(t, f.DB, f.Org, ep.ID, 100_000)
	const batch = 500
	deep := time.Now().Add(-20 * time.Hour)
	for _, st := range models.Recorded {
		for _, at := range []time.Time{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), deep} {
			what := events.OrderShipped + " " + string(st) + " from " + at.Format(time.RFC3339)
			plan, text := pgtest.ExplainAnalyze(t, f.DB, delivery.RedactBatchSQL, ep.ID, events.OrderShipped, st, at, uuid.Max, batch)
			var read int64
			plan.Walk(func(n pgtest.PlanNode) {
				if n.NodeType == "Sort" || n.NodeType == "Incremental Sort" {
					t.Errorf("%s: plan sorts:\n%s", what, text)
				}
				if n.Relation == "webhook_deliveries" {
					if !n.ReadsByOnly("webhook_deliveries_endpoint_type") {
						t.Errorf("%s: reads webhook_deliveries by %s %q, removing %d rows by filter:\n%s", what, n.NodeType, n.Index, n.RemovedByFilter, text)
					}
					read += n.ActualRows * max(n.ActualLoops, 1)
				}
			})
			if read > batch {
				t.Errorf("%s: read %d rows for a batch of %d:\n%s", what, read, batch, text)
			}
		}
	}
}
