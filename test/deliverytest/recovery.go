package deliverytest

import (
	"time"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/models"
	"wds/workflows/contract"
)

// LimitedEndpoint is an order.created endpoint with a rate limit, for recoveries to pace by.
func (f *Fixture) LimitedEndpoint(rate int) *endpoints.Created {
	f.T.Helper()
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: "https://127.0.0.1/hook",
		EventTypes: []string{events.OrderCreated}, RateLimit: &rate})
	if err != nil {
		f.T.Fatal(err)
	}
	return ep
}

// DropChains writes n chains to the endpoint whose only attempt dropped, oldest first, their events
// long since started, and returns the dropped deliveries' ids.
func (f *Fixture) DropChains(endpointID uuid.UUID, n int) []uuid.UUID {
	f.T.Helper()
	var drops []uuid.UUID
	for range n {
		ev := f.Event(events.OrderCreated, map[string]any{"id": uuid.New()})
		d := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: ev, EndpointID: endpointID, EventType: events.OrderCreated,
			ChainID: uuid.New(), WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: models.StatusDropped, AttemptedAt: time.Now()}
		if err := f.DB.Create(&d).Error; err != nil {
			f.T.Fatal(err)
		}
		drops = append(drops, d.ID)
	}
	if err := f.DB.Exec("UPDATE events SET dispatched_at = now()").Error; err != nil {
		f.T.Fatal(err)
	}
	return drops
}

// RunningRecoveries starts n recoveries of the org, each of its own endpoint (limited to 1,000 a
// second, so the org's budget is what paces them) with chains dropped chains.
func (f *Fixture) RunningRecoveries(n, chains int) []uuid.UUID {
	f.T.Helper()
	var recs []uuid.UUID
	for range n {
		ep := f.LimitedEndpoint(1000)
		f.DropChains(ep.ID, chains)
		rec, err := f.Recoveries.Recover(f.Ctx, ep.ID, f.Owner, time.Now().Add(-time.Hour), nil)
		if err != nil {
			f.T.Fatal(err)
		}
		recs = append(recs, rec.ID)
	}
	return recs
}
