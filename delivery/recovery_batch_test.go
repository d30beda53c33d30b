package delivery_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/delivery"
	"wds/events"
)

// TestARecoveryBatchStartsItsChainsWithinTheActivity: a batch of a hundred chains against a Temporal
// that takes 40 ms to answer each start. One at a time that is four seconds, twice the after-commit
// budget a request gets; the batch runs in an activity and starts them several at once, so every
// chain it queued is started and marked by the batch itself, none left for the relay's grace. When
// Temporal is away, the batch still commits its chains and the relay starts them.
func TestARecoveryBatchStartsItsChainsWithinTheActivity(t *testing.T) {
	f := newFixture(t)
	limit := 1000
	ep, err := f.svc.Create(f.ctx, delivery.CreateInput{OrgID: f.org, ActorID: f.owner, URL: "https://127.0.0.1/hook",
		EventTypes: []string{events.OrderCreated}, RateLimit: &limit})
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	f.dropChains(ep.ID, n+10)
	rec, err := f.svc.Recover(f.ctx, ep.ID, f.owner, time.Now().Add(-time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	var inFlight, peak atomic.Int32
	tc := &fakeTemporal{starts: map[string]int{}, gate: func() {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
		}
		time.Sleep(40 * time.Millisecond)
	}}
	chainStarts := func() int { // the relay below also starts the recovery's own workflow
		tc.mu.Lock()
		defer tc.mu.Unlock()
		return len(tc.starts) - tc.starts[delivery.RecoveryWorkflowID(rec.ID)]
	}
	st := &delivery.Starter{DB: f.db, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet(), Grace: time.Hour}
	acts := &delivery.Activities{DB: f.db, Batches: st}
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second) // the activity's StartToCloseTimeout
	defer cancel()
	b, err := acts.RecoverBatch(ctx, delivery.RecoveryParams{RecoveryID: rec.ID})
	if err != nil || b.Started != n {
		t.Fatalf("batch %+v, %v: want %d started", b, err, n)
	}
	if started, unmarked := chainStarts(), f.unstartedRecoveryChains(); started != n || unmarked != 0 {
		t.Fatalf("%d chains started, %d queued but not marked started; want %d and 0", started, unmarked, n)
	}
	if p := peak.Load(); p < 2 || p > 8 {
		t.Errorf("%d starts in flight at once, want between 2 and 8", p)
	}

	// Temporal away: the next batch commits its ten chains, and the relay starts them later.
	tc.mu.Lock()
	tc.down = true
	tc.mu.Unlock()
	if b, err = acts.RecoverBatch(ctx, delivery.RecoveryParams{RecoveryID: rec.ID}); err != nil || b.Started != n+10 {
		t.Fatalf("batch with Temporal away %+v, %v", b, err)
	}
	if unmarked := f.unstartedRecoveryChains(); unmarked != 10 {
		t.Fatalf("%d chains left for the relay, want 10", unmarked)
	}
	tc.mu.Lock()
	tc.down = false
	tc.mu.Unlock()
	st.Grace = 0
	if _, err := st.RelayOnce(f.ctx, 50); err != nil || f.unstartedRecoveryChains() != 0 || chainStarts() != n+10 {
		t.Fatalf("relay: %v, %d unmarked, %d chains started", err, f.unstartedRecoveryChains(), chainStarts())
	}
}

// dropChains writes n chains to the endpoint whose only attempt dropped, oldest first, their events
// long since started, and returns the dropped deliveries' ids.
func (f *fixture) dropChains(endpointID uuid.UUID, n int) []uuid.UUID {
	f.t.Helper()
	var drops []uuid.UUID
	for range n {
		ev := f.event(events.OrderCreated, map[string]any{"id": uuid.New()})
		d := delivery.Delivery{ID: uuid.New(), OrgID: f.org, EventID: ev, EndpointID: endpointID, EventType: events.OrderCreated,
			ChainID: uuid.New(), WorkflowID: delivery.EventWorkflowID(ev), Attempt: 1, Status: delivery.StatusDropped, AttemptedAt: time.Now()}
		if err := f.db.Create(&d).Error; err != nil {
			f.t.Fatal(err)
		}
		drops = append(drops, d.ID)
	}
	if err := f.db.Exec("UPDATE events SET dispatched_at = now()").Error; err != nil {
		f.t.Fatal(err)
	}
	return drops
}

// unstartedRecoveryChains counts the chains recoveries queued whose workflow is not marked started.
func (f *fixture) unstartedRecoveryChains() int64 {
	var n int64
	f.db.Model(&delivery.Dispatch{}).Where("kind = ? AND dispatched_at IS NULL", delivery.DispatchRecovery).Count(&n)
	return n
}
