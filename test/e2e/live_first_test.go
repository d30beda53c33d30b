package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/dev/temporaldev"
)

// TestResendsNeverTakeAFreshDeliverysSlot: a worker with one activity slot for fresh deliveries and
// one for manual chains. Two resends go to a receiver that hangs, so the manual slot stays taken (and
// the second resend waits for it); meanwhile fresh events to another endpoint are delivered at once.
// With one task queue for both, the hanging resend held the only slot for the 10 s POST timeout.
func TestResendsNeverTakeAFreshDeliverysSlot(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.maxActivities, h.manualSlots = 1, 1
	release := make(chan struct{})
	stuck := newReceiver(t, ok)
	stuck.onRequest = func(n int) {
		if n > 2 { // the resends hang until the test ends
			<-release
		}
	}
	live := newReceiver(t, ok)
	hanging := h.endpoint(stuck, 1, "vendor.created")
	h.endpoint(live, 1, "client.created")
	h.startWorker()
	t.Cleanup(func() { close(release) }) // before the worker stops: it waits for its activities
	first, second := h.emit("vendor.created"), h.emit("vendor.created")
	waitFor(t, 30*time.Second, "the first deliveries", func() bool { return stuck.count() == 2 })
	for _, ev := range []uuid.UUID{first, second} {
		status, out := h.call("/admin/v1/events/"+ev.String()+"/resend", h.ownerToken, map[string]any{"endpoint_id": hanging.id})
		if status != http.StatusAccepted {
			t.Fatalf("resend: %d %v", status, out)
		}
	}
	waitFor(t, 10*time.Second, "a resend at the hanging receiver", func() bool { return stuck.count() == 3 })
	start := time.Now()
	const fresh = 3
	for range fresh {
		h.emit("client.created")
	}
	waitFor(t, 5*time.Second, "the fresh deliveries while the resends hang", func() bool { return live.count() == fresh })
	if stuck.count() != 3 {
		t.Errorf("the hanging receiver got %d requests: the second resend should wait for the manual slot", stuck.count())
	}
	t.Logf("%d fresh deliveries in %v while a resend held the manual slot", fresh, time.Since(start).Round(time.Millisecond))
}
