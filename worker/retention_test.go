package worker_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/models"
	"wds/test/deliverytest"
	"wds/worker"
)

// Prune removes what is older than the cutoff and nothing that anything newer, or anything still to
// be started, refers to.
func TestPruneDeletesOnlyWhatNothingNeeds(t *testing.T) {
	f := newFixture(t)
	ep, _ := f.Create("https://127.0.0.1/hook")
	old, recent := time.Now().Add(-100*24*time.Hour), time.Now()
	cutoff := time.Now().Add(-90 * 24 * time.Hour)
	event := func(createdAt time.Time, dispatched bool) uuid.UUID {
		id, err := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.DB.Exec(`UPDATE events SET created_at = ?, dispatched_at = CASE WHEN ? THEN ?::timestamptz END WHERE id = ?`,
			createdAt, dispatched, createdAt, id)
		return id
	}
	gone := event(old, true) // old, delivered long ago: pruned with its rows
	f.Delivery(gone, ep.ID, 1, "succeeded", old)
	f.DB.Exec(`INSERT INTO webhook_refire_counters (event_id, endpoint_id, n) VALUES (?, ?, 1)`, gone, ep.ID)
	f.DB.Create(&models.Dispatch{ID: uuid.New(), OrgID: f.Org, Kind: models.DispatchRefire, WorkflowID: "w-old",
		EventID: gone, EndpointID: ep.ID, ChainID: uuid.New(), CreatedAt: old, DispatchedAt: &old})
	refired := event(old, true) // old, but re-fired recently: its new rows keep it
	f.Delivery(refired, ep.ID, 5, "dropped", old)
	f.Delivery(refired, ep.ID, 1, "succeeded", recent)
	queued := event(old, true) // old, with a re-fire still waiting to start
	f.DB.Create(&models.Dispatch{ID: uuid.New(), OrgID: f.Org, Kind: models.DispatchRefire, WorkflowID: "w-queued",
		EventID: queued, EndpointID: ep.ID, ChainID: uuid.New(), CreatedAt: old})
	undispatched := event(old, false) // never started (the relay's backlog): kept
	fresh := event(recent, true)

	p, err := worker.Prune(f.Ctx, f.DB, cutoff, 1) // batches of one: the loop must go on
	if err != nil {
		t.Fatal(err)
	}
	if p != (worker.Pruned{Deliveries: 2, Dispatches: 1, Events: 1}) {
		t.Fatalf("pruned %+v", p)
	}
	for id, want := range map[uuid.UUID]bool{gone: false, refired: true, queued: true, undispatched: true, fresh: true} {
		var n int64
		f.DB.Model(&models.Event{}).Where("id = ?", id).Count(&n)
		if (n == 1) != want {
			t.Errorf("event %s kept %v, want %v", id, n == 1, want)
		}
	}
	var counters int64
	f.DB.Raw(`SELECT count(*) FROM webhook_refire_counters`).Find(&counters)
	if counters != 0 {
		t.Errorf("%d re-fire counters of pruned events left", counters)
	}
}

// Once a rotation's grace has ended, the previous secret leaves the database at the next prune: it
// signs nothing any more, and a sealed copy kept forever would outlive its use. A secret still in
// its grace stays.
func TestPruneClearsPreviousSecretsWhoseGraceEnded(t *testing.T) {
	f := newFixture(t)
	ended, _ := f.Create("https://127.0.0.1/ended")
	running, _ := f.Create("https://127.0.0.1/running")
	for _, ep := range []uuid.UUID{ended.ID, running.ID} {
		if _, err := f.Svc.RotateSecret(f.Ctx, ep, f.Owner, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	f.DB.Exec(`UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second' WHERE id = ?`, ended.ID)
	p, err := worker.Prune(f.Ctx, f.DB, time.Now().Add(-90*24*time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if p.Secrets != 1 {
		t.Fatalf("pruned %+v, want one previous secret cleared", p)
	}
	for id, kept := range map[uuid.UUID]bool{ended.ID: false, running.ID: true} {
		var ep models.Endpoint
		f.DB.Take(&ep, "id = ?", id)
		if (ep.PreviousSecretSealed != nil) != kept || (ep.PreviousSecretUntil != nil) != kept {
			t.Errorf("endpoint %s: previous secret kept %v (until %v), want %v", id, ep.PreviousSecretSealed != nil, ep.PreviousSecretUntil, kept)
		}
	}
}
