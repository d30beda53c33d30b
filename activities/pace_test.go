package activities_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/models"
	"wds/test/deliverytest"
	"wds/workflows/contract"
)

// TestARateLimitHoldsAttemptsBackWithoutSendingOrRecording: forty attempts at once to an endpoint
// limited to 5 a second, from as many goroutines as workers: five a second send, the others are held
// and leave no row, each with a place of its own reserved (a reservation, not a poll): the forty
// places keep the limit in every window. Asked again at its place, a held attempt sends in it
// without taking another; asked early, it is told to wait the rest; asked long after, it takes a
// new place.
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
	var answers []contract.AttemptResult
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
				held, answers = append(held, in), append(answers, res)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var rows int64
	f.DB.Model(&models.Delivery{}).Count(&rows)
	sent := len(rc.Got())
	if sent < 5 || sent+len(held) != 40 || rows != int64(sent) {
		t.Fatalf("%d sent, %d held, %d rows; want at least 5 sent, the rest held, a row per send", sent, len(held), rows)
	}
	places := func() []time.Time {
		var at []time.Time
		f.DB.Raw("SELECT sent_at FROM webhook_endpoint_sends WHERE endpoint_id = ? ORDER BY sent_at", ep.ID).Scan(&at)
		return at
	}
	// Each attempt took one place: the sent ones theirs, the held ones a distinct one each. (The table
	// itself may hold fewer: each reservation prunes places older than a window, so on a slow run the
	// first ones are gone before the last is taken.)
	at, slots := places(), map[time.Time]bool{}
	for _, res := range answers {
		if res.SlotAt != nil {
			slots[res.SlotAt.UTC()] = true
		}
	}
	if len(slots) != len(held) || len(at) > 40 {
		t.Fatalf("%d distinct places for %d held attempts, %d kept for 40 attempts", len(slots), len(held), len(at))
	}
	for i := range at {
		if j := i + 5; j < len(at) && at[j].Sub(at[i]) < time.Second {
			t.Fatalf("six places within %v: %v", at[j].Sub(at[i]), at[i:j+1])
		}
	}
	// first is the earliest place still a second ahead (on a slow run the earliest may have passed
	// while the others were reserved), last the latest.
	first, last := -1, 0
	for i, res := range answers {
		if res.SlotAt == nil || res.Wait <= 0 {
			t.Fatalf("held without a place: %+v", res)
		}
		if time.Until(*res.SlotAt) > time.Second && (first < 0 || res.SlotAt.Before(*answers[first].SlotAt)) {
			first = i
		}
		if res.SlotAt.After(*answers[last].SlotAt) {
			last = i
		}
	}
	if first < 0 {
		t.Fatalf("no held place a second ahead after the 40 reservations: %+v", answers)
	}
	in, res := held[last], answers[last]
	in.SlotAt = res.SlotAt
	if early, err := acts.Deliver(f.Ctx, in); err != nil || early.Outcome != models.StatusHeld || *early.SlotAt != *res.SlotAt || early.Wait > res.Wait {
		t.Fatalf("asked early: %+v %v, want the rest of the wait for the same place", early, err)
	}
	// Asked again as the workflow does, a little before its place: it waits the rest and sends in it.
	in, res = held[first], answers[first]
	in.SlotAt = res.SlotAt
	time.Sleep(time.Until(*res.SlotAt) - 100*time.Millisecond)
	if res, err := acts.Deliver(f.Ctx, in); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("asked again at its place: %+v %v", res, err)
	}
	if sentAt := rc.Got(); len(sentAt) != sent+1 {
		t.Fatalf("%d sends", len(sentAt))
	}
	if n := len(places()); n != len(at) {
		t.Fatalf("%d places after a held attempt sent in its own, %d before: it took another", n, len(at))
	}
	late := held[(first+1)%len(held)]
	late.SlotAt = ptr(time.Now().Add(-time.Minute))
	if res, err := acts.Deliver(f.Ctx, late); err != nil || res.Outcome != models.StatusHeld || !res.SlotAt.After(*late.SlotAt) {
		t.Fatalf("asked long after its place: %+v %v, want a new place", res, err)
	}
	// An endpoint without a limit is never held.
	free := f.Endpoint(rc.Srv.URL)
	for range 20 {
		if res, err := acts.Deliver(f.Ctx, deliverytest.Attempt(ev, free.ID, 1, deliverytest.Later())); err != nil || res.Outcome != models.StatusSucceeded {
			t.Fatalf("unlimited: %+v %v", res, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
