package eventsearch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/eventsearch"
	"wds/internal/platform/paging"
	"wds/test/pgtest"
)

// TestOrderSearchIsAnIndexWalk seeds 120,000 events (ten per order) with a delivery each in two
// orgs, so that a sequential scan and sort is a real choice for the planner, and checks that finding
// an order's events (first page and deep) walks events_org_order in order (or, with an outcome,
// event_states_org_outcome) and reads no chains (each event's outcome is kept in its state row): the page costs
// the same at ten million events.
func TestOrderSearchIsAnIndexWalk(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	other := uuid.New()
	f.DB.Exec("INSERT INTO orgs (id, name) VALUES (?, 'other')", other)
	for _, org := range []uuid.UUID{f.Org, other} {
		err := f.DB.Exec(`INSERT INTO events (id, org_id, type, body, created_at, dispatched_at)
			SELECT gen_random_uuid(), ?, 'payment.recorded',
				json_build_object('data', json_build_object('payment', json_build_object('id', gen_random_uuid()),
					'order', json_build_object('id', md5((g / 10)::text || ?::text)::uuid))),
				now() - g * interval '1 second', now()
			FROM generate_series(1, 60000) g`, org, org.String()).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	seedDeliveries(t, f, ep.ID, "succeeded")
	f.DB.Exec("ANALYZE")
	var order uuid.UUID
	if err := f.DB.Raw("SELECT order_id FROM events WHERE org_id = ? ORDER BY created_at DESC OFFSET 5000 LIMIT 1", f.Org).Row().Scan(&order); err != nil {
		t.Fatal(err)
	}
	deep := &paging.Cursor{At: time.Now().Add(-50000 * time.Second), ID: uuid.New()}
	for _, q := range []eventsearch.EventsQuery{
		{OrgID: f.Org, OrderID: &order, Limit: 51},
		{OrgID: f.Org, OrderID: &order, Limit: 51, Cursor: deep},
		{OrgID: f.Org, OrderID: &order, Limit: 51, Cursor: deep, Newer: true},
		{OrgID: f.Org, OrderID: &order, Limit: 51, Outcome: eventsearch.OutcomeDropped},
	} {
		sql, args := eventsearch.EventsPageSQL(q)
		root, p := pgtest.Explain(t, f.DB, sql, args...)
		usedIndex := false
		root.Walk(func(n pgtest.PlanNode) {
			if strings.Contains(n.NodeType, "Sort") && n.Reads("events") {
				t.Errorf("plan sorts the events:\n%s", p)
			}
			if n.Relation == "events" && !strings.HasPrefix(n.NodeType, "Index") && !strings.HasPrefix(n.NodeType, "Bitmap") {
				t.Errorf("%s is read by %s, want an index:\n%s", n.Relation, n.NodeType, p)
			}
			usedIndex = usedIndex || n.Index == "events_org_order" || (q.Outcome != "" && n.Index == "event_states_org_outcome")
		})
		if !usedIndex || root.Reads("webhook_deliveries") {
			t.Errorf("plan does not walk events_org_order (%v) or reads chains:\n%s", usedIndex, p)
		}
	}
	page, err := f.Events.ListEvents(f.Ctx, eventsearch.EventsQuery{OrgID: f.Org, OrderID: &order, Limit: 50})
	if err != nil || len(page.Rows) != 10 || page.Rows[0].Outcome != eventsearch.OutcomeSucceeded || *page.Rows[0].OrderID != order {
		t.Fatalf("%+v %v", page, err)
	}
}

// seedDeliveries writes one attempt of the given status for every event that has none, a slice at a
// time (the triggers that keep each event's outcome work through every row a statement writes).
func seedDeliveries(t testing.TB, f *fixture, endpointID uuid.UUID, status string) {
	t.Helper()
	for {
		r := f.DB.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
			SELECT gen_random_uuid(), org_id, id, ?, type, gen_random_uuid(), 'w', 1, ?, created_at FROM events e
			WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id) LIMIT 20000`, endpointID, status)
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		if r.RowsAffected == 0 {
			return
		}
	}
}
