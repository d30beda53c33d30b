package endpoints_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/activities"
	"wds/internal/dispatch"
	"wds/internal/resend"
	"wds/models"
	"wds/workflows/contract"
)

// TestHandReFiresRacingARecoveryReFireEachDeliveryOnce: forty dropped chains; a recovery's batches
// and two operators re-firing every one of them by hand run at once. Whoever comes first re-fires a
// delivery; the other finds it re-fired (the hand re-fire answers the recovery's chain). Each
// delivery ends with exactly one chain, and the recovery's count is what it started.
func TestHandReFiresRacingARecoveryReFireEachDeliveryOnce(t *testing.T) {
	f := newFixture(t)
	ep := f.LimitedEndpoint(10)
	const n = 40
	drops := f.DropChains(ep.ID, n)
	rec, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-time.Hour), nil)
	if err != nil || rec.Total != n {
		t.Fatalf("%+v %v", rec, err)
	}
	acts := &activities.Activities{DB: f.DB}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			b, err := acts.RecoverBatch(f.Ctx, contract.RecoveryParams{RecoveryID: rec.ID})
			if err != nil {
				t.Error(err)
				return
			}
			if b.Done {
				return
			}
		}
	}()
	// Two operators work from the newest drop back while the recovery works from the oldest on:
	// they meet in the middle, where both want the same rows.
	answers := make([]*resend.Refired, n)
	var mu sync.Mutex
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := n - 1; i >= 0; i-- {
				out, err := f.Resends.Refire(f.Ctx, drops[i], f.Owner)
				if err != nil {
					t.Errorf("hand re-fire of %s: %v", drops[i], err)
					return
				}
				mu.Lock()
				if answers[i] != nil && answers[i].ChainID != out.ChainID {
					t.Errorf("two hand re-fires of %s answered two chains", drops[i])
				}
				answers[i] = out
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var perDelivery []struct {
		RefiredDeliveryID uuid.UUID
		N                 int
		Chain             uuid.UUID
	}
	f.DB.Raw(`SELECT refired_delivery_id, count(*) AS n, min(chain_id::text)::uuid AS chain FROM webhook_dispatches
		GROUP BY refired_delivery_id`).Scan(&perDelivery)
	chains := map[uuid.UUID]uuid.UUID{}
	for _, p := range perDelivery {
		if p.N != 1 {
			t.Errorf("delivery %s re-fired %d times", p.RefiredDeliveryID, p.N)
		}
		chains[p.RefiredDeliveryID] = p.Chain
	}
	if len(perDelivery) != n {
		t.Fatalf("%d deliveries re-fired, want %d", len(perDelivery), n)
	}
	for i, id := range drops {
		if answers[i] != nil && answers[i].ChainID != chains[id] {
			t.Errorf("the hand re-fire of %s answered chain %s, but its chain is %s", id, answers[i].ChainID, chains[id])
		}
	}
	got, _ := f.Recoveries.Recovery(f.Ctx, rec.ID, nil)
	var byRecovery int64
	f.DB.Model(&models.Dispatch{}).Where("kind = ?", models.DispatchRecovery).Count(&byRecovery)
	if got.Status != models.RecoveryCompleted || int64(got.Started) != byRecovery {
		t.Fatalf("recovery %+v, %d chains of its own", got, byRecovery)
	}
	t.Logf("the recovery re-fired %d, the operator %d", byRecovery, n-int(byRecovery))
}

// TestARecoveryBatchStartsItsChainsWithinTheActivity: a batch of a hundred chains against a Temporal
// that takes 40 ms to answer each start. One at a time that is four seconds, twice the after-commit
// budget a request gets; the batch runs in an activity and starts them several at once, so every
// chain it queued is started and marked by the batch itself, none left for the relay's grace. When
// Temporal is away, the batch still commits its chains and the relay starts them.
func TestARecoveryBatchStartsItsChainsWithinTheActivity(t *testing.T) {
	f := newFixture(t)
	ep := f.LimitedEndpoint(1000)
	const n = 100
	f.DropChains(ep.ID, n+10)
	rec, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-time.Hour), nil)
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
		return len(tc.starts) - tc.starts[contract.RecoveryWorkflowID(rec.ID)]
	}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet(), Grace: time.Hour}
	acts := &activities.Activities{DB: f.DB, Batches: st, RecoveryRate: 1000} // batches of a hundred
	ctx, cancel := context.WithTimeout(f.Ctx, 10*time.Second)                 // the activity's StartToCloseTimeout
	defer cancel()
	b, err := acts.RecoverBatch(ctx, contract.RecoveryParams{RecoveryID: rec.ID})
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
	if b, err = acts.RecoverBatch(ctx, contract.RecoveryParams{RecoveryID: rec.ID}); err != nil || b.Started != n+10 {
		t.Fatalf("batch with Temporal away %+v, %v", b, err)
	}
	if unmarked := f.unstartedRecoveryChains(); unmarked != 10 {
		t.Fatalf("%d chains left for the relay, want 10", unmarked)
	}
	tc.mu.Lock()
	tc.down = false
	tc.mu.Unlock()
	st.Grace = 0
	if _, err := st.RelayOnce(f.Ctx, 50); err != nil || f.unstartedRecoveryChains() != 0 || chainStarts() != n+10 {
		t.Fatalf("relay: %v, %d unmarked, %d chains started", err, f.unstartedRecoveryChains(), chainStarts())
	}
}

// unstartedRecoveryChains counts the chains recoveries queued whose workflow is not marked started.
func (f *fixture) unstartedRecoveryChains() int64 {
	var n int64
	f.DB.Model(&models.Dispatch{}).Where("kind = ? AND dispatched_at IS NULL", models.DispatchRecovery).Count(&n)
	return n
}

// TestARecoveryCancelledByItsEndpointsDisableIsAudited: a recovery whose endpoint is disabled (or
// deleted) meanwhile ends at its next batch as cancelled, and the audit log says so with no actor,
// the service having done it, once however many batches ask.
func TestARecoveryCancelledByItsEndpointsDisableIsAudited(t *testing.T) {
	f := newFixture(t)
	acts := &activities.Activities{DB: f.DB}
	for _, stop := range []string{"disable", "delete"} {
		ep := f.LimitedEndpoint(1)
		f.DropChains(ep.ID, 3)
		rec, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-time.Hour), nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := acts.RecoverBatch(f.Ctx, contract.RecoveryParams{RecoveryID: rec.ID}); err != nil || b.Started != 1 || b.Done {
			t.Fatalf("%s: first batch %+v %v", stop, b, err)
		}
		if stop == "disable" {
			_, err = f.Svc.Disable(f.Ctx, ep.ID, f.Owner)
		} else {
			_, err = f.Svc.Delete(f.Ctx, ep.ID, f.Owner)
		}
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // a retried activity task asks again
			if b, err := acts.RecoverBatch(f.Ctx, contract.RecoveryParams{RecoveryID: rec.ID}); err != nil || !b.Done || b.Status != models.RecoveryCancelled {
				t.Fatalf("%s: batch after it %+v %v", stop, b, err)
			}
		}
		var audit []models.AuditEntry
		f.DB.Raw(`SELECT org_id, coalesce(actor_id, '00000000-0000-0000-0000-000000000000') AS actor_id, action, target_type, target_id, details
			FROM audit_log WHERE target_id = ? AND action <> 'endpoint.recover'`, rec.ID).Scan(&audit)
		var nullActor bool
		f.DB.Raw(`SELECT bool_and(actor_id IS NULL) FROM audit_log WHERE target_id = ? AND action <> 'endpoint.recover'`, rec.ID).Scan(&nullActor)
		if len(audit) != 1 || !nullActor || audit[0].Action != "recovery.auto_cancelled" || audit[0].TargetType != "webhook_recovery" ||
			audit[0].OrgID != f.Org || audit[0].Details["endpoint_id"] != ep.ID.String() || audit[0].Details["reason"] != "endpoint_"+stop+"d" ||
			audit[0].Details["started"] != 1.0 || audit[0].Details["total"] != 3.0 {
			t.Fatalf("%s: audit %+v (actor null: %v)", stop, audit, nullActor)
		}
	}
}
