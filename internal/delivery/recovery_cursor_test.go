package delivery_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/internal/endpoints"
	"wds/internal/recovery"
	"wds/models"
	"wds/test/pgtest"
	"wds/workflows/contract"
)

// seedDrops writes n dropped chains to the endpoint, one event each, attempted over the last 20
// hours in order, directly (as the bench's recovery line does).
func seedDrops(t testing.TB, f *fixture, orgID, endpointID uuid.UUID, n int) {
	t.Helper()
	const slice = 40000 // a statement's rows: the event outcome triggers work through each
	for from := 1; from <= n; from += slice {
		for _, sql := range []string{`INSERT INTO events (id, org_id, type, body, created_at, dispatched_at)
			SELECT md5(CAST(@ep AS text) || g)::uuid, @org, 'order.created', '{}', now() - interval '20 hours', now() FROM generate_series(CAST(@from AS int), CAST(@to AS int)) g`,
			`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, error, attempted_at)
			SELECT gen_random_uuid(), @org, md5(CAST(@ep AS text) || g)::uuid, @ep, 'order.created', gen_random_uuid(), 'w', 1, 'dropped', 'HTTP 500',
				now() - interval '20 hours' + g * interval '100 milliseconds' FROM generate_series(CAST(@from AS int), CAST(@to AS int)) g`} {
			args := map[string]any{"org": orgID, "ep": endpointID, "from": from, "to": min(from+slice-1, n)}
			if err := f.DB.Exec(sql, args).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A recovery's batch walks the endpoint's unrecovered drops from its cursor through
// webhook_unrecovered_drops_endpoint, in order: no sort, no other endpoint's (or org's) rows, the same plan
// at the first batch and deep in the recovery.
func TestRecoveryBatchIsAKeysetWalk(t *testing.T) {
	f := newFixture(t)
	ep := f.LimitedEndpoint(100)
	seedDrops(t, f, f.Org, ep.ID, 20000)
	other := uuid.New()
	f.DB.Exec("INSERT INTO orgs (id, name) VALUES (?, 'other')", other)
	var otherEp uuid.UUID
	err := f.DB.Raw(`INSERT INTO webhook_endpoints (id, org_id, url, event_types, secret_sealed, enabled, max_attempts, created_by)
		SELECT gen_random_uuid(), ?, url, event_types, secret_sealed, true, max_attempts, created_by FROM webhook_endpoints WHERE id = ? RETURNING id`, other, ep.ID).Row().Scan(&otherEp)
	if err != nil {
		t.Fatal(err)
	}
	seedDrops(t, f, other, otherEp, 20000)
	f.DB.Exec("ANALYZE")
	deep := time.Now().Add(-10 * time.Hour)
	id := uuid.New()
	for _, rec := range []*models.Recovery{
		{EndpointID: ep.ID, Since: time.Now().Add(-21 * time.Hour), Until: time.Now()},
		{EndpointID: ep.ID, Since: time.Now().Add(-21 * time.Hour), Until: time.Now(), AfterAt: &deep, AfterID: &id},
	} {
		sql, args := delivery.BatchSQL(rec, 100)
		pgtest.CheckKeysetScan(t, f.DB, "recovery batch", "webhook_unrecovered_drops", "webhook_unrecovered_drops_endpoint", sql, args)
	}
}

// Batches continue after the last chain taken: a recovery of 250 chains at 100 a batch takes three
// batches and ends at the fourth, re-firing each chain once (one re-fired by hand before it is
// passed over), and leaves its cursor on the last chain.
func TestRecoveryBatchesContinueAfterTheLastChainTaken(t *testing.T) {
	f := newFixture(t)
	ep := f.LimitedEndpoint(100)
	drops := f.DropChains(ep.ID, 250)
	if _, err := f.Resends.Refire(f.Ctx, drops[120], f.Owner); err != nil {
		t.Fatal(err)
	}
	rec, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-time.Hour), nil)
	if err != nil || rec.Total != 249 {
		t.Fatalf("%+v %v", rec, err)
	}
	var started []int
	for {
		b, _, err := delivery.NextRecoveryBatch(f.Ctx, f.DB, contract.RecoveryParams{RecoveryID: rec.ID}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if b.Done {
			break
		}
		started = append(started, b.Started)
	}
	var perDelivery []int
	f.DB.Raw("SELECT count(*) FROM webhook_dispatches GROUP BY refired_delivery_id").Scan(&perDelivery)
	var got models.Recovery
	f.DB.Where("id = ?", rec.ID).Take(&got)
	if len(started) != 3 || started[2] != 249 || len(perDelivery) != 250 || got.Status != models.RecoveryCompleted ||
		got.AfterID == nil || *got.AfterID != drops[249] {
		t.Fatalf("batches %v, %d deliveries re-fired, recovery %+v", started, len(perDelivery), got)
	}
	for _, n := range perDelivery {
		if n != 1 {
			t.Fatalf("a delivery re-fired %d times", n)
		}
	}
}

// With WDS_RETENTION 0 a recovery reaches back 90 days at most; with a retention, no further than it.
func TestARecoveryReachesBackNoFurtherThanItsBound(t *testing.T) {
	f := newFixture(t)
	ep := f.LimitedEndpoint(10)
	for _, c := range []struct {
		retention time.Duration
		since     time.Time
	}{
		{0, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{0, time.Now().Add(-recovery.MaxRecoveryReach - time.Hour)},
		{7 * 24 * time.Hour, time.Now().Add(-8 * 24 * time.Hour)},
	} {
		f.Recoveries.Retention = c.retention
		if _, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, c.since, nil); !errors.Is(err, endpoints.ErrInvalidParameter) {
			t.Errorf("retention %s, since %s: %v, want invalid_parameter", c.retention, c.since, err)
		}
	}
	var n int64
	f.DB.Model(&models.Recovery{}).Count(&n)
	if n != 0 {
		t.Fatalf("%d recoveries written by refused requests", n)
	}
	f.Recoveries.Retention = 0
	if _, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-recovery.MaxRecoveryReach+time.Hour), nil); err != nil {
		t.Fatalf("a recovery within 90 days: %v", err)
	}
}

// batchBuffers is how many buffers the recovery's next batch query reads (EXPLAIN ANALYZE, BUFFERS,
// rolled back): its cost, without the timing noise of a busy machine.
func batchBuffers(t *testing.T, f *fixture, recoveryID uuid.UUID) int {
	t.Helper()
	var rec models.Recovery
	if err := f.DB.Where("id = ?", recoveryID).Take(&rec).Error; err != nil {
		t.Fatal(err)
	}
	sql, args := delivery.BatchSQL(&rec, 100)
	tx := f.DB.Begin() // EXPLAIN ANALYZE runs the batch: its writes are rolled back
	defer tx.Rollback()
	return pgtest.BlocksRead(t, tx, sql, args)
}

// The short form of the noisy-neighbour measure's recovery line: 5,000 dropped chains recovered to
// the end, each re-fired exactly once, and the last batch reads no more than 1.5 times what the
// second read (walking from the start past every chain already re-fired, it read them all).
func TestARecoveryReFiresEachChainOnceAndItsBatchesCostTheSame(t *testing.T) {
	f := newFixture(t)
	ep := f.LimitedEndpoint(100)
	const n = 5000
	seedDrops(t, f, f.Org, ep.ID, n)
	f.DB.Exec("ANALYZE")
	rec, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-21*time.Hour), nil)
	if err != nil || rec.Total != n {
		t.Fatalf("%+v %v", rec, err)
	}
	var costs []int
	for {
		cost := batchBuffers(t, f, rec.ID)
		b, _, err := delivery.NextRecoveryBatch(f.Ctx, f.DB, contract.RecoveryParams{RecoveryID: rec.ID}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if b.Done {
			break
		}
		costs = append(costs, cost)
	}
	var perDelivery []int
	f.DB.Raw("SELECT count(*) FROM webhook_dispatches WHERE recovery_id = ? GROUP BY refired_delivery_id", rec.ID).Scan(&perDelivery)
	if len(perDelivery) != n || len(costs) != n/100 {
		t.Fatalf("%d chains re-fired in %d batches, want %d in %d", len(perDelivery), len(costs), n, n/100)
	}
	for _, c := range perDelivery {
		if c != 1 {
			t.Fatalf("a chain re-fired %d times", c)
		}
	}
	// The first batch finds no re-fire to look up at all; the second is the first of the steady state.
	first, last := costs[1], costs[len(costs)-1]
	if float64(last) > 1.5*float64(first) {
		t.Fatalf("the last batch read %d buffers, the second %d: %v", last, first, costs)
	}
	t.Logf("batch buffers: second %d, last %d", first, last)
}
