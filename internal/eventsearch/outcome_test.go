package eventsearch_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/internal/events"
	"wds/internal/eventsearch"
	"wds/internal/platform/paging"
	"wds/models"
	"wds/test/pgtest"
	"wds/workflows/contract"
)

// An event's outcome and chain count are kept on its row by the writes that change them: its
// dispatch, each attempt, a disable dropping its waiting chain, a resend queued and the resend's
// success. A search by outcome finds it in each state, and only then.
func TestEventOutcomeIsKeptByEachWrite(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	ev := f.Event(events.OrderCreated, nil)
	expect := func(step string, want eventsearch.Outcome, chains int) {
		t.Helper()
		for _, o := range eventsearch.Outcomes {
			page, err := f.Events.ListEvents(f.Ctx, eventsearch.EventsQuery{OrgID: f.Org, Outcome: o, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			found := len(page.Rows) == 1 && page.Rows[0].ID == ev
			if found != (o == want) || (found && page.Rows[0].ChainsTotal != chains) {
				t.Fatalf("%s: search by %s found %+v, want the event only under %s with %d chains", step, o, page.Rows, want, chains)
			}
		}
	}
	expect("written", eventsearch.OutcomeInProgress, 0)
	f.DB.Exec("UPDATE events SET dispatched_at = clock_timestamp() WHERE id = ?", ev)
	expect("dispatched, no chain yet", eventsearch.OutcomeNoEndpoints, 0)
	later := time.Now().Add(time.Hour)
	first := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: ev, EndpointID: ep.ID, EventType: events.OrderCreated,
		ChainID: uuid.New(), WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: models.StatusFailed,
		AttemptedAt: time.Now(), NextAttemptAt: &later}
	if _, err := delivery.RecordAttempt(f.Ctx, f.DB, &first); err != nil {
		t.Fatal(err)
	}
	expect("failed, a retry to come", eventsearch.OutcomeInProgress, 1)
	if _, err := f.Svc.Disable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	expect("dropped by the disable", eventsearch.OutcomeDropped, 1)
	if _, err := f.Svc.Enable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	resent, err := f.Resends.Resend(f.Ctx, ev, f.Owner, &ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	expect("resend queued", eventsearch.OutcomeInProgress, 2)
	chain := resent.Chains[0]
	ok := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: ev, EndpointID: ep.ID, EventType: events.OrderCreated,
		ChainID: chain.ChainID, WorkflowID: chain.WorkflowID, Attempt: 1, Status: models.StatusSucceeded, AttemptedAt: time.Now()}
	if _, err := delivery.RecordAttempt(f.Ctx, f.DB, &ok); err != nil {
		t.Fatal(err)
	}
	expect("the resend succeeded", eventsearch.OutcomeSucceeded, 2)

	// An event nothing is subscribed to is written dispatched: it has no endpoints from the start.
	unheard := f.Event(events.VendorCreated, map[string]any{"id": uuid.New()})
	page, err := f.Events.ListEvents(f.Ctx, eventsearch.EventsQuery{OrgID: f.Org, Outcome: eventsearch.OutcomeNoEndpoints, Limit: 10})
	if err != nil || len(page.Rows) != 1 || page.Rows[0].ID != unheard {
		t.Fatalf("no_endpoints: %+v %v", page, err)
	}
}

// A search for a rare outcome among many events (here none matches, the case that read every event
// of the org) walks event_states_org_outcome within the org, in the page's order: no sort, no other
// org's rows, no chains read.
func TestOutcomeSearchIsAnIndexWalk(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	other := uuid.New()
	f.DB.Exec("INSERT INTO orgs (id, name) VALUES (?, 'other')", other)
	for _, org := range []uuid.UUID{f.Org, other} {
		err := f.DB.Exec(`INSERT INTO events (id, org_id, type, body, created_at, dispatched_at)
			SELECT gen_random_uuid(), ?, 'order.created', '{}', now() - g * interval '1 second', now()
			FROM generate_series(1, 30000) g`, org).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	seedDeliveries(t, f, ep.ID, "succeeded")
	f.DB.Exec("ANALYZE")
	for _, q := range []eventsearch.EventsQuery{
		{OrgID: f.Org, Outcome: eventsearch.OutcomeDropped, Limit: 51},
		{OrgID: f.Org, Outcome: eventsearch.OutcomeInProgress, Limit: 51},
		{OrgID: f.Org, Outcome: eventsearch.OutcomeDropped, Limit: 51, Cursor: &paging.Cursor{At: time.Now().Add(-20000 * time.Second), ID: uuid.New()}},
	} {
		sql, args := eventsearch.EventsPageSQL(q)
		root, plan := pgtest.Explain(t, f.DB, sql, args...)
		used := false
		root.Walk(func(n pgtest.PlanNode) {
			if n.NodeType == "Sort" || n.NodeType == "Incremental Sort" {
				t.Errorf("%s: plan sorts:\n%s", q.Outcome, plan)
			}
			if (n.Relation == "events" || n.Relation == "event_states") && n.NodeType != "Index Scan" && n.NodeType != "Index Only Scan" {
				t.Errorf("%s: %s read by %s:\n%s", q.Outcome, n.Relation, n.NodeType, plan)
			}
			used = used || n.Index == "event_states_org_outcome"
		})
		if !used || root.Reads("webhook_deliveries") {
			t.Errorf("%s: want a walk of event_states_org_outcome and no chains read:\n%s", q.Outcome, plan)
		}
	}
}

// A search for an outcome most of the org's events have, when the newest have another (an outage's
// drops after months of successes), still walks event_states_org_outcome. The planner supposes an outcome
// is spread evenly over time, so walking the org's newest events (events_org) and filtering looked as
// cheap, and in the noisy-neighbour line at a million rows it walked 200,000 newer drops for 51
// rows (1.3 s). The data is shaped as there: events written in time order, their outcome set after
// by an update, as the delivery log's triggers set it.
func TestACommonOutcomeUnderNewerDropsIsAnIndexWalk(t *testing.T) {
	f := newFixture(t)
	other := uuid.New()
	f.DB.Exec("INSERT INTO orgs (id, name) VALUES (?, 'other')", other)
	for org, n := range map[uuid.UUID]int{f.Org: 200_000, other: 5_000} {
		err := f.DB.Exec(`INSERT INTO events (id, org_id, type, body, created_at, dispatched_at, outcome, chains_total)
			SELECT gen_random_uuid(), ?, 'order.created', '{}', now() - (? - g) * interval '10 milliseconds', now(), 'in_progress', 1
			FROM generate_series(1, ?) g`, org, n, n).Error
		if err != nil {
			t.Fatal(err)
		}
		err = f.DB.Exec(`UPDATE event_states SET outcome = CASE WHEN created_at > now() - ? * interval '2 milliseconds'
				THEN 'dropped' ELSE 'succeeded' END WHERE org_id = ?`, n, org).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.DB.Exec("VACUUM ANALYZE events, event_states").Error; err != nil {
		t.Fatal(err)
	}
	sql, args := eventsearch.EventsPageSQL(eventsearch.EventsQuery{OrgID: f.Org, Outcome: eventsearch.OutcomeSucceeded, Limit: 51})
	pgtest.CheckKeysetScan(t, f.DB, "succeeded under newer drops", "event_states", "event_states_org_outcome", sql, args...)
	// A deep page, a search until a time, and both: each reads about a page of blocks, starting the
	// walk at its bound, never walking from the newest of the outcome's 160,000 events (thousands of
	// blocks). A row of the page is four or so: its state row, and its event found by primary key.
	now := time.Now()
	deep, until := &paging.Cursor{At: now.Add(-1900 * time.Second), ID: uuid.New()}, now.Add(-500*time.Second)
	for what, q := range map[string]eventsearch.EventsQuery{
		"deep page":           {OrgID: f.Org, Outcome: eventsearch.OutcomeSucceeded, Limit: 51, Cursor: deep},
		"until":               {OrgID: f.Org, Outcome: eventsearch.OutcomeSucceeded, Limit: 51, Until: &until},
		"until and deep page": {OrgID: f.Org, Outcome: eventsearch.OutcomeSucceeded, Limit: 51, Until: &until, Cursor: deep},
	} {
		sql, args := eventsearch.EventsPageSQL(q)
		if blocks := pgtest.BlocksRead(t, f.DB, sql, args...); blocks > 300 {
			t.Errorf("%s: the page read %d blocks, want about a page's", what, blocks)
		}
	}
}
