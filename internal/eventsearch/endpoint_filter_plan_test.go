package eventsearch_test

import (
	"testing"

	"wds/internal/eventsearch"
	"wds/test/pgtest"
)

// The event search's endpoint filter looks an event's attempts up by the event
// (webhook_deliveries_event) and its chains' by the chain's key, a few rows each, never by walking
// the endpoint's log: on an endpoint with 60,000 attempts, the endpoint's index is not read.
func TestTheEndpointFilterReadsEachEventsAttempts(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	if err := f.DB.Exec(`INSERT INTO events (id, org_id, type, body, created_at, dispatched_at)
		SELECT gen_random_uuid(), ?, 'order.created', '{}', now() - g * interval '1 second', now()
		FROM generate_series(1, 60000) g`, f.Org).Error; err != nil {
		t.Fatal(err)
	}
	seedDeliveries(t, f, ep.ID, "succeeded")
	f.DB.Exec("ANALYZE")
	sql, args := eventsearch.EventsPageSQL(eventsearch.EventsQuery{OrgID: f.Org, EndpointID: &ep.ID, Limit: 51})
	root, text := pgtest.Explain(t, f.DB, sql, args...)
	root.Walk(func(n pgtest.PlanNode) {
		if n.Relation == "webhook_deliveries" && n.Index != "webhook_deliveries_event" && n.Index != "webhook_deliveries_chain_id_attempt_key" {
			t.Errorf("reads webhook_deliveries by %s %q, want by event or chain:\n%s", n.NodeType, n.Index, text)
		}
	})
	if !root.Reads("webhook_deliveries") {
		t.Errorf("the plan does not read the attempts:\n%s", text)
	}
}
