package endpoints_test

import (
	"testing"
	"time"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/operator"
	"wds/internal/platform/ratelimit"
	"wds/internal/workspace"
	"wds/models"
)

// An org reading its delivery logs and charts in a loop takes its own turns, one read at a time,
// whichever list it reads: twenty reads at once (the org's log, an endpoint's log and the overview's
// counts in turn) against a pace of ten a second with half a second of queue get ten turns at once
// and the rest at the pace (each checks the reader's role first, so they ask a little apart; asked
// together, five would be refused), while another org's read, asked meanwhile, answers without
// waiting behind them.
func TestAnOrgsReadsArePacedApartFromOtherOrgs(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	f.Delivery(f.Event(events.OrderCreated, nil), ep.ID, 1, models.StatusSucceeded, time.Now())
	reads := ratelimit.NewPacer(10, 500*time.Millisecond, nil)
	f.Svc.Reads = reads
	lists := operator.NewService(f.DB, reads)
	q := operator.Query{OrgID: f.Org, ActorID: f.Owner, Limit: 50}
	read := []func() error{
		func() error {
			_, err := lists.ListDeliveries(f.Ctx, q, operator.DeliveryFilter{Status: models.StatusDropped})
			return err
		},
		func() error {
			_, err := f.Svc.ListDeliveries(f.Ctx, endpoints.DeliveriesQuery{EndpointID: ep.ID, ActorID: &f.Owner})
			return err
		},
		func() error { _, err := lists.DeliveryHistory(f.Ctx, q, time.Now().Add(-7*24*time.Hour)); return err },
	}
	people := workspace.NewService(f.DB)
	other, _ := people.CreateOrg(f.Ctx, "Other")
	otherOwner, _, _ := people.CreateUser(f.Ctx, other.ID, "owner@other.test", models.RoleOwner)

	checkPacedApart(t, false, func(i int) error { return read[i%len(read)]() }, func() error {
		_, err := lists.ListDeliveries(f.Ctx, operator.Query{OrgID: other.ID, ActorID: otherOwner.ID}, operator.DeliveryFilter{})
		return err
	})
}
