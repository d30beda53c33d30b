package endpoints_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/activities"
	"wds/internal/dispatch"
	"wds/internal/endpoints"
	"wds/models"
	"wds/test/pgtest"
	"wds/workflows/contract"
)

// An org's running recoveries share WDS_RECOVERY_RATE, whatever their endpoints' rate limits allow:
// two recoveries at a budget of 20 a second take 10 chains a batch each, a second apart; one left
// alone takes the whole 20; a share below one a second takes one chain and waits longer.
func TestAnOrgsRecoveriesShareItsBudget(t *testing.T) {
	f := newFixture(t)
	recs := f.runningRecoveries(2, 60)
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
	if _, err := f.Svc.CancelRecovery(f.Ctx, recs[1], f.Owner); err != nil {
		t.Fatal(err)
	}
	if n, wait := batch(20, recs[0]); n != 20 || wait != time.Second {
		t.Fatalf("one recovery at 20 a second: a batch of %d, then %s; want 20, then 1s", n, wait)
	}
}

// runningRecoveries starts n recoveries of the org, each of its own endpoint (limited to 1,000 a
// second, so the org's budget is what paces them) with chains dropped chains.
func (f *fixture) runningRecoveries(n, chains int) []uuid.UUID {
	f.T.Helper()
	var recs []uuid.UUID
	for range n {
		ep := f.limitedEndpoint(1000)
		f.dropChains(ep.ID, chains)
		rec, err := f.Svc.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-time.Hour), nil)
		if err != nil {
			f.T.Fatal(err)
		}
		recs = append(recs, rec.ID)
	}
	return recs
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
	root, text := pgtest.Explain(t, tx, endpoints.OrgRecoveriesSQL, f.Org, models.RecoveryRunning)
	used := false
	root.Walk(func(n pgtest.PlanNode) { used = used || n.Index == "webhook_recoveries_org_running" })
	if !used {
		t.Fatalf("plan does not use webhook_recoveries_org_running:\n%s", text)
	}
}

// A batch's chains are started spread over the second they stand for, not in a burst at its start,
// and the batch takes that whole second itself: twenty chains at twenty a second start about 50 ms
// apart, the last about 950 ms in, and the next batch is due as the batch returns.
func TestARecoveryBatchSpreadsItsStartsOverItsSecond(t *testing.T) {
	f := newFixture(t)
	ep := f.limitedEndpoint(1000)
	f.dropChains(ep.ID, 40)
	rec, err := f.Svc.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var at []time.Time
	tc := &fakeTemporal{starts: map[string]int{}, gate: func() {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
	}}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet(), Grace: time.Hour}
	acts := &activities.Activities{DB: f.DB, Batches: st, RecoveryRate: 20}
	begin := time.Now()
	b, err := acts.RecoverBatch(f.Ctx, contract.RecoveryParams{RecoveryID: rec.ID})
	if err != nil || b.Started != 20 {
		t.Fatalf("%+v %v", b, err)
	}
	if len(at) != 20 {
		t.Fatalf("%d starts, want 20", len(at))
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	if first, last := at[0].Sub(begin), at[19].Sub(begin); first > 300*time.Millisecond || last < 900*time.Millisecond {
		t.Fatalf("starts from %s to %s after the batch began, want spread over its second", first, last)
	}
	for i := 2; i < len(at); i++ {
		if at[i].Sub(at[i-2]) < 60*time.Millisecond {
			t.Fatalf("three starts within %s: a burst", at[i].Sub(at[i-2]))
		}
	}
	if took := time.Since(begin); b.Wait != 0 || took < 950*time.Millisecond {
		t.Fatalf("the batch took %s and asks to wait %s more, want its whole second and no wait", took, b.Wait)
	}
}

// A share under half a chain a second holds its activity's slot for 2 s at most and leaves the rest
// of its wait to the workflow's durable timer: at a budget of 1 a second with three recoveries
// running (3 s a chain) the batch takes 2 s and asks for 1 s more.
func TestASlowRecoveryShareLeavesTheRestOfItsWaitToATimer(t *testing.T) {
	f := newFixture(t)
	recs := f.runningRecoveries(3, 2)
	tc := &fakeTemporal{starts: map[string]int{}}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet(), Grace: time.Hour}
	acts := &activities.Activities{DB: f.DB, Batches: st, RecoveryRate: 1}
	begin := time.Now()
	b, err := acts.RecoverBatch(f.Ctx, contract.RecoveryParams{RecoveryID: recs[0]})
	took := time.Since(begin)
	if err != nil || b.Started != 1 {
		t.Fatalf("%+v %v", b, err)
	}
	if took < 1900*time.Millisecond || took > 2900*time.Millisecond || b.Wait < 900*time.Millisecond || b.Wait > 1100*time.Millisecond {
		t.Fatalf("the batch took %s and asks to wait %s more, want about 2s and 1s", took, b.Wait)
	}
}
