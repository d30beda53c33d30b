package endpoints_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"wds/activities"
	"wds/internal/dispatch"
	"wds/workflows/contract"
)

// A batch's chains are started spread over the second they stand for, not in a burst at its start,
// and the batch takes that whole second itself: twenty chains at twenty a second start about 50 ms
// apart, the last about 950 ms after the first, and the next batch is due as the batch returns.
func TestARecoveryBatchSpreadsItsStartsOverItsSecond(t *testing.T) {
	f := newFixture(t)
	ep := f.LimitedEndpoint(1000)
	f.DropChains(ep.ID, 40)
	rec, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-time.Hour), nil)
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
	// Measured from the first start, not the batch's beginning: the batch reads and queues its chains
	// first, which a loaded machine slows by hundreds of milliseconds.
	if spread := at[19].Sub(at[0]); spread < 850*time.Millisecond {
		t.Fatalf("starts spread over %s, want over the batch's second (19 gaps of about 50 ms)", spread)
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
	recs := f.RunningRecoveries(3, 2)
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
