package activities_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/dev/deliverytest"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/models"
	"wds/workflows/contract"
)

// TestARateLimitHoldsAttemptsBackWithoutSendingOrRecording: forty attempts at once to an endpoint
// limited to 5 a second, from as many goroutines as workers: five a second send, the others are held
// with a wait of at most the window and leave no row; asked again after their wait, held ones send.
func TestARateLimitHoldsAttemptsBackWithoutSendingOrRecording(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	five := 5
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: rc.Srv.URL,
		EventTypes: []string{events.OrderCreated}, RateLimit: &five})
	if err != nil {
		t.Fatal(err)
	}
	acts := f.Acts(rc, true)
	ev := f.Event(events.OrderCreated, map[string]any{"id": uuid.New()})
	var mu sync.Mutex
	var held []contract.AttemptInput
	var waits []time.Duration
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := deliverytest.Attempt(ev, ep.ID, 1, deliverytest.Later())
			res, err := acts.Deliver(f.Ctx, in)
			if err != nil {
				t.Error(err)
				return
			}
			if res.Outcome == models.StatusHeld {
				mu.Lock()
				held, waits = append(held, in), append(waits, res.Wait)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Five places a window: on a loaded machine the forty may take longer than a window, and a
	// place freed meanwhile is taken again, so the count holds per window of the database's clock.
	var rows int64
	f.DB.Model(&models.Delivery{}).Count(&rows)
	sent := len(rc.Got())
	if sent < 5 || sent+len(held) != 40 || rows != int64(sent) {
		t.Fatalf("%d sent, %d held, %d rows; want at least 5 sent, the rest held, a row per send", sent, len(held), rows)
	}
	var at []time.Time
	f.DB.Raw("SELECT sent_at FROM webhook_endpoint_sends WHERE endpoint_id = ? ORDER BY sent_at", ep.ID).Scan(&at)
	for i := range at {
		if j := i + 5; j < len(at) && at[j].Sub(at[i]) < time.Second {
			t.Fatalf("six sends within %v: %v", at[j].Sub(at[i]), at[i:j+1])
		}
	}
	for _, w := range waits {
		if w <= 0 || w > 1200*time.Millisecond {
			t.Fatalf("held for %v", w)
		}
	}
	// Places taken after held[0]'s answer (a second window's, on a loaded machine) can fill the window
	// its wait pointed to: it waits as long as it is told to, a few times at most.
	res := contract.AttemptResult{Outcome: models.StatusHeld, Wait: waits[0]}
	for i := 0; res.Outcome == models.StatusHeld && i < 5; i++ {
		time.Sleep(res.Wait)
		res, err = acts.Deliver(f.Ctx, held[0])
	}
	if err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("asked again after the wait: %+v %v", res, err)
	}
	// An endpoint without a limit is never held.
	free := f.Endpoint(rc.Srv.URL)
	for range 20 {
		if res, err := acts.Deliver(f.Ctx, deliverytest.Attempt(ev, free.ID, 1, deliverytest.Later())); err != nil || res.Outcome != models.StatusSucceeded {
			t.Fatalf("unlimited: %+v %v", res, err)
		}
	}
}
