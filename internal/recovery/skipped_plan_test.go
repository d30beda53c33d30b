package recovery_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/recovery"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The count of a window's drops a recovery would skip reads the window's drops of each event type
// of the endpoint's log, one range each of its index: on an endpoint with 200,000 attempts, 0.1 %
// dropped, over types that include test events, nothing is read to be thrown away by a filter.
func TestSkippedDropsAreCountedFromTheEndpointsRanges(t *testing.T) {
	db := pgtest.New(t)
	org, ep := uuid.New(), uuid.New()
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL session_replication_role = replica").Error; err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
			SELECT gen_random_uuid(), @org, gen_random_uuid(), @ep,
				(ARRAY['order.created','payment.recorded','webhook.test','client.updated'])[1 + (i / 7) % 4], gen_random_uuid(), 'w', 1,
				CASE WHEN i % 1001 = 0 THEN 'dropped' WHEN i % 37 = 0 THEN 'failed' ELSE 'succeeded' END,
				now() - i * interval '1 second'
			FROM generate_series(1, 200000) i`, map[string]any{"org": org, "ep": ep}).Error
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("ANALYZE webhook_deliveries").Error; err != nil {
		t.Fatal(err)
	}
	since, until := time.Now().Add(-30*time.Hour), time.Now().Add(-10*time.Hour)
	sql, args, err := recovery.SkippedSQL(context.Background(), db, ep, since, until)
	if err != nil {
		t.Fatal(err)
	}
	var drops int64
	if err := db.Raw(`SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'dropped' AND event_type <> 'webhook.test'
		AND attempted_at >= ? AND attempted_at < ?`, ep, since, until).Scan(&drops).Error; err != nil {
		t.Fatal(err)
	}
	plan, text := pgtest.ExplainAnalyze(t, db, sql, args)
	var read int64
	plan.Walk(func(n pgtest.PlanNode) {
		if n.Relation == "webhook_deliveries" {
			if !n.ReadsByOnly("webhook_deliveries_endpoint_type") {
				t.Errorf("reads webhook_deliveries by %s %q, removing %d rows by filter:\n%s", n.NodeType, n.Index, n.RemovedByFilter, text)
			}
			read += n.ActualRows * max(n.ActualLoops, 1)
		}
	})
	if drops == 0 || read != drops {
		t.Errorf("read %d rows for the window's %d drops of real events:\n%s", read, drops, text)
	}
}
