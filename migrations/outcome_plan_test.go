package migrations_test

import (
	"slices"
	"testing"

	"wds/test/deliverytest"
)

// The outcome trigger's update is planned once a connection (00052): planned for each attempt, it
// was most of what a delivery cost wds's PostgreSQL (docs/benchmarks.md, "The outcome trigger's
// planning"). A CREATE OR REPLACE of the function drops the setting unless it names it again, which
// this test would catch; the delivery-only line measures what it saves.
func TestTheOutcomeTriggerKeepsAGenericPlan(t *testing.T) {
	f := deliverytest.NewFixture(t)
	var config []string
	if err := f.DB.Raw(`SELECT unnest(proconfig) FROM pg_proc WHERE proname = 'wds_keep_event_outcomes'`).
		Scan(&config).Error; err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(config, "plan_cache_mode=force_generic_plan") {
		t.Fatalf("wds_keep_event_outcomes runs with %v, want plan_cache_mode=force_generic_plan", config)
	}
}
