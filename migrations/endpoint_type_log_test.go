package migrations_test

import (
	"context"
	"testing"

	"wds/migrations"
	"wds/test/pgtest"
)

// 00048 replaces the endpoint's log index by one that fixes the event type before the status, so
// every attempt still writes seven index entries, and its Down puts the old one back.
func TestEndpointLogIndexFixesTheTypeWithoutAnEighthIndex(t *testing.T) {
	db := pgtest.New(t)
	indexes := func() map[string]string {
		t.Helper()
		var rows []struct{ Indexname, Indexdef string }
		if err := db.Raw(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'webhook_deliveries'`).Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range rows {
			out[r.Indexname] = r.Indexdef
		}
		return out
	}
	check := func(when, want, gone, def string) {
		t.Helper()
		got := indexes()
		if len(got) != 7 {
			t.Errorf("%s: %d indexes on webhook_deliveries, want 7: %v", when, len(got), got)
		}
		if got[want] != def {
			t.Errorf("%s: %s is %q, want %q", when, want, got[want], def)
		}
		if _, ok := got[gone]; ok {
			t.Errorf("%s: %s is still there", when, gone)
		}
	}
	const (
		byType   = "webhook_deliveries_endpoint_type"
		byStatus = "webhook_deliveries_endpoint_status"
	)
	check("up", byType, byStatus,
		"CREATE INDEX "+byType+" ON public.webhook_deliveries USING btree (endpoint_id, event_type, status, attempted_at DESC, id DESC)")
	sqlDB, _ := db.DB()
	err := migrations.Between(context.Background(), sqlDB, 47, 48, func() error {
		check("down", byStatus, byType,
			"CREATE INDEX "+byStatus+" ON public.webhook_deliveries USING btree (endpoint_id, status, attempted_at DESC, id DESC)")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("up again", byType, byStatus,
		"CREATE INDEX "+byType+" ON public.webhook_deliveries USING btree (endpoint_id, event_type, status, attempted_at DESC, id DESC)")
}
