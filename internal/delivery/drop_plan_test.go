package delivery_test

import (
	"testing"

	"wds/internal/delivery"
	"wds/models"
	"wds/test/pgtest"
)

// Disabling a busy endpoint drops its waiting chains by reading only the attempts that wait
// (webhook_deliveries_pending), never the endpoint's log.
func TestDroppingAnEndpointsChainsReadsOnlyTheWaitingOnes(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	seedLog(t, f.DB, f.Org, ep.ID, 100_000)
	if err := f.DB.Exec(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 minute'
		WHERE endpoint_id = ? AND status = 'failed' AND attempted_at > now() - interval '10 minutes'`, ep.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := f.DB.Exec("ANALYZE webhook_deliveries").Error; err != nil {
		t.Fatal(err)
	}
	plan, text := pgtest.Explain(t, f.DB, delivery.DropPendingSQL, models.StatusDropped, "disabled", ep.ID, models.StatusFailed)
	used := false
	plan.Walk(func(n pgtest.PlanNode) {
		if n.Relation != "webhook_deliveries" || n.NodeType == "ModifyTable" {
			return
		}
		byPending := n.Index == "webhook_deliveries_pending" ||
			(n.NodeType == "Bitmap Heap Scan" && len(n.Plans) == 1 && n.Plans[0].Index == "webhook_deliveries_pending")
		if !byPending {
			t.Errorf("reads webhook_deliveries by %s %q, want webhook_deliveries_pending:\n%s", n.NodeType, n.Index, text)
		}
		used = used || byPending
	})
	if !used {
		t.Errorf("does not read webhook_deliveries_pending:\n%s", text)
	}
}
