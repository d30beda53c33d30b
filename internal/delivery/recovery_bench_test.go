package delivery_test

import (
	"testing"
	"time"

	"wds/internal/delivery"
	"wds/models"
	"wds/workflows/contract"
)

// BenchmarkRecoveryBatch measures a recovery's batch of 100 chains on an endpoint with 200,000
// dropped chains: the first batch, and one after 150,000 chains were re-fired by the recovery (their
// dispatches written directly, the cursor moved as the batches would have) (docs/benchmarks.md):
//
//	go test -run '^$' -bench RecoveryBatch -benchtime 20x ./internal/endpoints/
func BenchmarkRecoveryBatch(b *testing.B) {
	f := newFixture(b)
	ep := f.LimitedEndpoint(1000)
	seedDrops(b, f, f.Org, ep.ID, 200_000)
	rec, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-21*time.Hour), nil)
	if err != nil || rec.Total != 200_000 {
		b.Fatalf("%+v %v", rec, err)
	}
	batch := func(b *testing.B) {
		// Each run takes a batch and gives it back (rolled back), so every run costs the same.
		for range b.N {
			tx := f.DB.Begin()
			if _, _, err := delivery.NextRecoveryBatch(f.Ctx, tx, contract.RecoveryParams{RecoveryID: rec.ID}, 1000); err != nil {
				b.Fatal(err)
			}
			tx.Rollback()
		}
	}
	b.Run("first", batch)
	for from := 1; from <= 150_000; from += 50_000 {
		err := f.DB.Exec(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id, refired_delivery_id, recovery_id)
			SELECT gen_random_uuid(), org_id, 'recovery', 'recovery/' || id, event_id, endpoint_id, gen_random_uuid(), id, ?
			FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY attempted_at, id OFFSET ? LIMIT 50000`, rec.ID, ep.ID, from-1).Error
		if err != nil {
			b.Fatal(err)
		}
	}
	var last models.Delivery
	f.DB.Where("endpoint_id = ?", ep.ID).Order("attempted_at, id").Offset(149_999).Limit(1).Take(&last)
	f.DB.Exec("UPDATE webhook_recoveries SET after_at = ?, after_id = ?, started = 150000 WHERE id = ?", last.AttemptedAt, last.ID, rec.ID)
	f.DB.Exec("ANALYZE")
	b.Run("after-150k", batch)
}
