package operator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/dev/pgtest"
)

// The overview's chart costs what its window costs: over twelve orgs with a year of delivery log
// each, the org's last seven days are read as one index range on (org_id, attempted_at): neither
// its year nor the other orgs' windows.
func TestDeliveryHistoryReadsOnlyTheWindow(t *testing.T) {
	db := pgtest.New(t)
	// Twelve orgs alike: 2,000 attempts each in the window, a year of history before it.
	var orgs []uuid.UUID
	for range 3 {
		orgs = append(orgs, seedDeliveries(t, db, 2000)...)
	}
	org, ep, ev := orgs[0], uuid.New(), uuid.New()
	var user uuid.UUID
	if err := db.Raw("SELECT created_by FROM webhook_endpoints WHERE org_id = ?", org).Row().Scan(&user); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO memberships (org_id, user_id, role) VALUES (@org, @user, 'member')`,
		`INSERT INTO events (id, org_id, type, body) VALUES (@ev, @org, 'order.created', '{}')`,
		`INSERT INTO webhook_endpoints (id, org_id, url, event_types, secret_sealed, created_by)
			VALUES (@ep, @org, 'https://old.example/', '{order.created}', '\x00', @user)`,
		// The history: one attempt an hour for a year before the window, in every org.
		`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
			SELECT gen_random_uuid(), e.org_id, ev.id, e.id, 'order.created', gen_random_uuid(), 'webhook-event/x', 1, 'succeeded',
				now() - interval '8 days' - g * interval '1 hour'
			FROM webhook_endpoints e JOIN events ev ON ev.org_id = e.org_id AND ev.id <> @ev, generate_series(1, 8760) g`,
		// Re-fires of every other org's drops, and of one of this org's.
		`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id, refired_delivery_id)
			SELECT gen_random_uuid(), d.org_id, 'refire', 'w-' || d.id, d.event_id, d.endpoint_id, gen_random_uuid(), d.id
			FROM webhook_deliveries d WHERE d.status = 'dropped' AND d.org_id <> @org`,
		`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id, refired_delivery_id)
			SELECT gen_random_uuid(), d.org_id, 'refire', 'w-' || d.id, d.event_id, d.endpoint_id, gen_random_uuid(), d.id
			FROM webhook_deliveries d WHERE d.status = 'dropped' AND d.org_id = @org LIMIT 1`,
		// In the window: a re-fired chain's first attempt and a recovered one's, an hour ago.
		`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
			SELECT gen_random_uuid(), @org, @ev, @ep, 'order.created', gen_random_uuid(), w, 1, 'succeeded', now() - interval '1 hour'
			FROM unnest(ARRAY['webhook-refire/a/b/1', 'webhook-recovery/a/b/2']) w`,
	} {
		if err := db.Exec(q, map[string]any{"org": org, "ep": ep, "ev": ev, "user": user}).Error; err != nil {
			t.Fatal(err)
		}
	}
	db.Exec("ANALYZE")
	since := time.Now().Add(-7 * 24 * time.Hour)
	sql, args := historySQL(org, since)
	var rows []string
	if err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(historyPlan).Error; err != nil {
			return err
		}
		return tx.Raw("EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args).Scan(&rows).Error
	}); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(rows, "")
	var plan []struct{ Plan pgtest.PlanNode }
	if err := json.Unmarshal([]byte(text), &plan); err != nil || len(plan) != 1 {
		t.Fatalf("plan: %v %s", err, text)
	}
	// Read as the range of webhook_deliveries_org_keyset for (org, attempted_at >= since): the
	// org's 2,002 rows in the window, not its year (8,760 more) nor the other orgs' 22,000.
	ranged, read := false, int64(0)
	plan[0].Plan.Walk(func(n pgtest.PlanNode) {
		if n.NodeType == "Seq Scan" || (n.Index != "" && n.Index != "webhook_deliveries_org_keyset" && n.Index != "webhook_dispatches_refired_delivery") {
			t.Errorf("the history reads webhook_deliveries by %s %s:\n%s", n.NodeType, n.Index, text)
		}
		if n.Index == "webhook_deliveries_org_keyset" {
			ranged = strings.Contains(n.IndexCond, "org_id") && strings.Contains(n.IndexCond, "attempted_at")
			read = n.ActualRows * n.ActualLoops
		}
		if n.Relation != "webhook_dispatches" && n.Index != "webhook_dispatches_refired_delivery" {
			read += n.RemovedByFilter + n.RemovedByRecheck
		}
	})
	if !ranged || read > 2002 {
		t.Errorf("the history read %d rows for the window's 2,002, ranged on org_id and attempted_at: %v\n%s", read, ranged, text)
	}
	t.Logf("rows read for the org's window of 2,002: %d", read)

	got, err := NewService(db).DeliveryHistory(context.Background(), Query{OrgID: org, ActorID: user}, since)
	if err != nil {
		t.Fatal(err)
	}
	var total, refired, droppedRefired int64
	for _, h := range got {
		total += h.Succeeded + h.Failed + h.Dropped
		refired += h.Refired
		droppedRefired += h.DroppedRefired
		if h.Hour.Minute() != 0 || h.Hour.Second() != 0 {
			t.Errorf("bucket %v is not an hour", h.Hour)
		}
	}
	if total != 2002 || refired != 2 || droppedRefired != 1 {
		t.Errorf("the history counts %d attempts, %d re-fired chains and %d drops re-fired since, want 2002, 2 and 1", total, refired, droppedRefired)
	}
}
