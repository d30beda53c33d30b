package deliverylog

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/platform/paging"
	"wds/test/pgtest"
)

// The overview's chart costs what its window costs: over twelve orgs, each with two endpoints busy
// every minute of the 8 days kept, the org's last seven days are read as one range of
// webhook_endpoint_minutes_org, neither its older minutes nor the other orgs', and not one delivery
// row, however many attempts the minutes count.
func TestDeliveryHistoryReadsOnlyTheWindow(t *testing.T) {
	db := pgtest.New(t)
	var orgs []uuid.UUID
	for range 3 {
		orgs = append(orgs, seedDeliveries(t, db, 10)...)
	}
	org := orgs[0]
	var user uuid.UUID
	if err := db.Raw("SELECT created_by FROM webhook_endpoints WHERE org_id = ?", org).Row().Scan(&user); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`INSERT INTO memberships (org_id, user_id, role) VALUES (?, ?, 'member')`, org, user).Error; err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		// A second endpoint in each org, then every minute of 8 days for each endpoint.
		`INSERT INTO webhook_endpoints (id, org_id, url, event_types, secret_sealed, created_by)
			SELECT gen_random_uuid(), org_id, 'https://two.example/', event_types, secret_sealed, created_by FROM webhook_endpoints`,
		`INSERT INTO webhook_endpoint_minutes (endpoint_id, org_id, minute, succeeded, failed, dropped, refired, dropped_refired)
			SELECT e.id, e.org_id, date_trunc('minute', now()) - g * interval '1 minute', 100, 3, 1, 2, 1
			FROM webhook_endpoints e, generate_series(0, 8 * 24 * 60 - 1) g`,
	} {
		if err := db.Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	db.Exec("ANALYZE")
	since := time.Now().Truncate(time.Minute).Add(-7 * 24 * time.Hour)
	sql, args := historySQL(org, since)
	plan, text := pgtest.ExplainAnalyze(t, db, sql, args)
	window := int64(2 * (7*24*60 + 1)) // two endpoints, the window's minutes and the one it starts in
	var read int64
	ranged := false
	plan.Walk(func(n pgtest.PlanNode) {
		ranged = ranged || (n.Index == "webhook_endpoint_minutes_org" && strings.Contains(n.IndexCond, "minute"))
		if n.Relation == "" {
			return
		}
		// The org's range, in the index's order or as a bitmap of its pages.
		byIndex := n.Index == "webhook_endpoint_minutes_org" || n.NodeType == "Bitmap Heap Scan"
		if n.Relation != "webhook_endpoint_minutes" || !byIndex || n.RemovedByFilter+n.RemovedByRecheck > 0 {
			t.Errorf("the history reads %s by %s %q, removing %d rows:\n%s", n.Relation, n.NodeType, n.Index, n.RemovedByFilter+n.RemovedByRecheck, text)
		}
		read += n.ActualRows * max(n.ActualLoops, 1)
	})
	if !ranged || read > window {
		t.Errorf("the history read %d minutes for the window's %d, on a range of (org_id, minute): %v\n%s", read, window, ranged, text)
	}
	t.Logf("minutes read for the org's window of %d: %d", window, read)

	got, err := NewService(db, nil, nil).DeliveryHistory(context.Background(), paging.OrgQuery{OrgID: org, ActorID: user}, since)
	if err != nil {
		t.Fatal(err)
	}
	var succeeded, failed, dropped, refired, droppedRefired int64
	for _, h := range got {
		succeeded, failed, dropped = succeeded+h.Succeeded, failed+h.Failed, dropped+h.Dropped
		refired, droppedRefired = refired+h.Refired, droppedRefired+h.DroppedRefired
		if h.Hour.Minute() != 0 || h.Hour.Second() != 0 {
			t.Errorf("bucket %v is not an hour", h.Hour)
		}
	}
	// A minute's failed counts its drops: the chart's failures are the others.
	if succeeded != 100*read || failed != 2*read || dropped != read || refired != 2*read || droppedRefired != read {
		t.Errorf("the history counts %d succeeded, %d failed, %d dropped, %d re-fired chains and %d drops re-fired over %d minutes",
			succeeded, failed, dropped, refired, droppedRefired, read)
	}
}
