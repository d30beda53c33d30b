package e2e

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/dev/temporaldev"
	"wds/models"
	"wds/test/deliverytest"
)

// A worker with a retention prunes what is older at start (and hourly after): the outbox and the
// delivery log do not grow forever.
func TestTheWorkerPrunesWhatIsOlderThanItsRetention(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	rc := newReceiver(t, ok)
	ep := h.endpoint(rc, 5, "client.created")
	// An event delivered 100 days ago, written as it was then (no workflow is started for it now).
	old, err := deliverytest.Emit(h.ctx, h.db, h.org, nil, "client.created", map[string]any{"id": uuid.New()})
	if err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-100 * 24 * time.Hour)
	h.db.Exec(`UPDATE events SET created_at = ?, dispatched_at = ? WHERE id = ?`, then, then, old)
	h.db.Create(&models.Delivery{ID: uuid.New(), OrgID: h.org, EventID: old, EndpointID: ep.id, EventType: "client.created",
		ChainID: uuid.New(), WorkflowID: "webhook-event/" + old.String(), Attempt: 1, Status: "succeeded", AttemptedAt: then})
	fresh := h.emit("client.created")

	h.retention = 90 * 24 * time.Hour
	h.startWorker()
	waitFor(t, 30*time.Second, "the old event pruned", func() bool {
		var n int64
		h.db.Model(&models.Event{}).Where("id = ?", old).Count(&n)
		return n == 0
	})
	// Recorded, not only received: the row is written after the receiver answers.
	waitFor(t, 30*time.Second, "the fresh event's delivery recorded", func() bool { return len(h.deliveries(ep.id)) == 1 })
	var n int64
	h.db.Model(&models.Event{}).Where("id = ?", fresh).Count(&n)
	if n != 1 || len(h.deliveries(ep.id)) != 1 || rc.count() != 1 {
		t.Fatalf("fresh event kept %d, deliveries %d", n, len(h.deliveries(ep.id)))
	}
}
