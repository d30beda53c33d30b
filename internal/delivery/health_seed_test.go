package delivery_test

import (
	"testing"

	"github.com/google/uuid"
)

// seedOutage writes the outage's delivery rows directly, one dropped chain each after one success,
// and the health their writes would have kept (as the migration's backfill computes it).
func seedOutage(t testing.TB, f *fixture, endpointID uuid.UUID, outage int) {
	t.Helper()
	ev := f.Event("order.created", nil)
	for _, sql := range []string{`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, error, attempted_at)
		SELECT gen_random_uuid(), @org, @event, @endpoint, 'order.created', gen_random_uuid(), 'w', 1, CASE WHEN g = 0 THEN 'succeeded' ELSE 'dropped' END,
			CASE WHEN g = 0 THEN '' ELSE 'HTTP 500' END, now() - interval '20 hours' + g * interval '300 microseconds'
		FROM generate_series(0, @n) g`,
		`UPDATE webhook_endpoints SET last_success_at = now() - interval '20 hours',
			failing_since = now() - interval '20 hours' + interval '300 microseconds', consecutive_dropped = @n WHERE id = @endpoint`,
		`INSERT INTO webhook_endpoint_minutes (endpoint_id, minute, succeeded, failed)
		SELECT endpoint_id, date_trunc('minute', attempted_at), count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status <> 'succeeded')
		FROM webhook_deliveries WHERE endpoint_id = @endpoint GROUP BY 1, 2`} {
		if err := f.DB.Exec(sql, map[string]any{"org": f.Org, "event": ev, "endpoint": endpointID, "n": outage}).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := f.DB.Exec("ANALYZE").Error; err != nil {
		t.Fatal(err)
	}
}
