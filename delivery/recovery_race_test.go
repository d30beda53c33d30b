package delivery_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/delivery"
	"wds/events"
)

// TestHandReFiresRacingARecoveryReFireEachDeliveryOnce: forty dropped chains; a recovery's batches
// and two operators re-firing every one of them by hand run at once. Whoever comes first re-fires a
// delivery; the other finds it re-fired (the hand re-fire answers the recovery's chain). Each
// delivery ends with exactly one chain, and the recovery's count is what it started.
func TestHandReFiresRacingARecoveryReFireEachDeliveryOnce(t *testing.T) {
	f := newFixture(t)
	ten := 10
	ep, err := f.svc.Create(f.ctx, delivery.CreateInput{OrgID: f.org, ActorID: f.owner, URL: "https://127.0.0.1/hook",
		EventTypes: []string{events.OrderCreated}, RateLimit: &ten})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	drops := f.dropChains(ep.ID, n)
	rec, err := f.svc.Recover(f.ctx, ep.ID, f.owner, time.Now().Add(-time.Hour), nil)
	if err != nil || rec.Total != n {
		t.Fatalf("%+v %v", rec, err)
	}
	acts := &delivery.Activities{DB: f.db}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			b, err := acts.RecoverBatch(f.ctx, delivery.RecoveryParams{RecoveryID: rec.ID})
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
	answers := make([]*delivery.Refired, n)
	var mu sync.Mutex
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := n - 1; i >= 0; i-- {
				out, err := f.svc.Refire(f.ctx, drops[i], f.owner)
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
	f.db.Raw(`SELECT refired_delivery_id, count(*) AS n, min(chain_id::text)::uuid AS chain FROM webhook_dispatches
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
	got, _ := f.svc.Recovery(f.ctx, rec.ID, nil)
	var byRecovery int64
	f.db.Model(&delivery.Dispatch{}).Where("kind = ?", delivery.DispatchRecovery).Count(&byRecovery)
	if got.Status != delivery.RecoveryCompleted || int64(got.Started) != byRecovery {
		t.Fatalf("recovery %+v, %d chains of its own", got, byRecovery)
	}
	t.Logf("the recovery re-fired %d, the operator %d", byRecovery, n-int(byRecovery))
}
