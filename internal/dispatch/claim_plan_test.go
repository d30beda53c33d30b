package dispatch_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"wds/internal/dispatch"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The relay's claim walks the queue of undispatched state rows (event_states_undispatched), oldest
// first, and reads only the events it claims: its cost is its batch's, however many events were
// dispatched before. 200,000 dispatched events lie beside 30 undispatched ones (the claim leaves the
// five inside the relay's grace). relay_claims, a handful of live rows, may be scanned.
func TestTheRelaysClaimWalksTheUndispatchedQueue(t *testing.T) {
	db := pgtest.New(t)
	org := uuid.New()
	if err := db.Exec("INSERT INTO orgs (id, name) VALUES (?, 'big')", org).Error; err != nil {
		t.Fatal(err)
	}
	err := db.Exec(`INSERT INTO events (id, org_id, type, body, created_at, dispatched_at)
		SELECT gen_random_uuid(), ?, 'order.created', '{}', now() - g * interval '1 second',
			CASE WHEN g > 30 THEN now() END
		FROM generate_series(1, 200000) g`, org).Error
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("VACUUM ANALYZE events, event_states").Error; err != nil {
		t.Fatal(err)
	}
	sql, args := dispatch.EventClaimSQL(db, dispatch.RelayGrace, 100)
	root, plan := pgtest.ExplainAnalyze(t, db, sql, args...)
	walked := false
	root.Walk(func(n pgtest.PlanNode) {
		if strings.Contains(n.NodeType, "Sort") || (n.NodeType == "Seq Scan" && n.Relation != "relay_claims") {
			t.Errorf("the claim sorts, or scans %s:\n%s", n.Relation, plan)
		}
		walked = walked || n.Index == "event_states_undispatched"
	})
	if !walked {
		t.Errorf("the claim does not walk event_states_undispatched:\n%s", plan)
	}
	// A claimed event reads about a dozen blocks (its state row and its event, each found by key and
	// locked, its targets and its order); a walk past the dispatched rows reads thousands.
	if blocks := pgtest.BlocksRead(t, db, sql, args...); blocks > 25*20 {
		t.Errorf("the claim of 25 events read %d blocks, want about its batch's", blocks)
	}
}
