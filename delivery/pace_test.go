package delivery_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/delivery"
	"wds/events"
	"wds/models"
)

// TestARateLimitHoldsAttemptsBackWithoutSendingOrRecording: forty attempts at once to an endpoint
// limited to 5 a second, from as many goroutines as workers: five send, the others are held with a
// wait of at most a second and leave no row; asked again after their wait, held ones send.
func TestARateLimitHoldsAttemptsBackWithoutSendingOrRecording(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	five := 5
	ep, err := f.svc.Create(f.ctx, delivery.CreateInput{OrgID: f.org, ActorID: f.owner, URL: rc.srv.URL,
		EventTypes: []string{events.OrderCreated}, RateLimit: &five})
	if err != nil {
		t.Fatal(err)
	}
	acts := f.acts(rc, true)
	ev := f.event(events.OrderCreated, map[string]any{"id": uuid.New()})
	var mu sync.Mutex
	var held []delivery.AttemptInput
	var waits []time.Duration
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := attempt(ev, ep.ID, 1, later())
			res, err := acts.Deliver(f.ctx, in)
			if err != nil {
				t.Error(err)
				return
			}
			if res.Outcome == delivery.OutcomeHeld {
				mu.Lock()
				held, waits = append(held, in), append(waits, res.Wait)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var rows int64
	f.db.Model(&models.Delivery{}).Count(&rows)
	if got := len(rc.got()); got != 5 || len(held) != 35 || rows != 5 {
		t.Fatalf("%d sent, %d held, %d rows; want 5, 35, 5", got, len(held), rows)
	}
	for _, w := range waits {
		if w <= 0 || w > 1200*time.Millisecond {
			t.Fatalf("held for %v", w)
		}
	}
	time.Sleep(waits[0])
	res, err := acts.Deliver(f.ctx, held[0])
	if err != nil || res.Outcome != models.DeliverySucceeded {
		t.Fatalf("asked again after the wait: %+v %v", res, err)
	}
	// An endpoint without a limit is never held.
	free := f.endpoint(rc.srv.URL)
	for range 20 {
		if res, err := acts.Deliver(f.ctx, attempt(ev, free.ID, 1, later())); err != nil || res.Outcome != models.DeliverySucceeded {
			t.Fatalf("unlimited: %+v %v", res, err)
		}
	}
}
