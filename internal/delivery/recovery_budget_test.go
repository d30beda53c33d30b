package delivery_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/activities"
	"wds/internal/delivery"
	"wds/models"
	"wds/test/pgtest"
	"wds/workflows/contract"
)

// An org's running recoveries share WDS_RECOVERY_RATE, whatever their endpoints' rate limits allow:
// two recoveries at a budget of 20 a second take 10 chains a batch each, a second apart; one left
// alone takes the whole 20; a share below one a second takes one chain and waits longer.
func TestAnOrgsRecoveriesShareItsBudget(t *testing.T) {
	f := newFixture(t)
	recs := f.RunningRecoveries(2, 60)
	batch := func(rate int, rec uuid.UUID) (started int, wait time.Duration) {
		t.Helper()
		acts := &activities.Activities{DB: f.DB, RecoveryRate: rate}
		before := f.startedBy(rec)
		b, err := acts.RecoverBatch(f.Ctx, contract.RecoveryParams{RecoveryID: rec})
		if err != nil || b.Done {
			t.Fatalf("%+v %v", b, err)
		}
		return b.Started - before, b.Wait
	}
	if n, wait := batch(20, recs[0]); n != 10 || wait != time.Second {
		t.Fatalf("two recoveries at 20 a second: a batch of %d, then %s; want 10, then 1s", n, wait)
	}
	if n, wait := batch(1, recs[1]); n != 1 || wait != 2*time.Second {
		t.Fatalf("two recoveries at 1 a second: a batch of %d, then %s; want 1, then 2s", n, wait)
	}
	if _, err := f.Recoveries.CancelRecovery(f.Ctx, recs[1], f.Owner); err != nil {
		t.Fatal(err)
	}
	if n, wait := batch(20, recs[0]); n != 20 || wait != time.Second {
		t.Fatalf("one recovery at 20 a second: a batch of %d, then %s; want 20, then 1s", n, wait)
	}
}

// startedBy is how many chains the recovery has started so far.
func (f *fixture) startedBy(rec uuid.UUID) int {
	f.T.Helper()
	var r models.Recovery
	if err := f.DB.Where("id = ?", rec).Take(&r).Error; err != nil {
		f.T.Fatal(err)
	}
	return r.Started
}

// Counting an org's running recoveries reads its own through webhook_recoveries_org_running, never
// another org's (sequential scans off: the test's table is small enough for one to win otherwise).
func TestCountingAnOrgsRecoveriesReadsOnlyItsOwn(t *testing.T) {
	f := newFixture(t)
	tx := f.DB.Begin()
	defer tx.Rollback()
	tx.Exec("SET LOCAL enable_seqscan = off")
	root, text := pgtest.Explain(t, tx, delivery.OrgRecoveriesSQL, f.Org, models.RecoveryRunning)
	used := false
	root.Walk(func(n pgtest.PlanNode) { used = used || n.Index == "webhook_recoveries_org_running" })
	if !used {
		t.Fatalf("plan does not use webhook_recoveries_org_running:\n%s", text)
	}
}
