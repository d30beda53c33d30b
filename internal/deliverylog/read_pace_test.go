package deliverylog_test

import (
	"testing"
	"time"

	"wds/internal/deliverylog"
	"wds/internal/events"
	"wds/internal/platform/paging"
	"wds/internal/platform/ratelimit"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/deliverytest"
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
	lists := deliverylog.NewService(f.DB, f.Box, reads)
	q := paging.OrgQuery{OrgID: f.Org, ActorID: f.Owner, Limit: 50}
	read := []func() error{
		func() error {
			_, err := lists.ListOrgDeliveries(f.Ctx, q, deliverylog.LogFilter{Status: models.StatusDropped})
			return err
		},
		func() error {
			_, err := lists.ListDeliveries(f.Ctx, deliverylog.DeliveriesQuery{EndpointID: ep.ID, ActorID: &f.Owner})
			return err
		},
		func() error { _, err := lists.DeliveryHistory(f.Ctx, q, time.Now().Add(-7*24*time.Hour)); return err },
	}
	people := workspace.NewService(f.DB)
	other, _ := people.CreateOrg(f.Ctx, "Other")
	otherOwner, _, _ := people.CreateUser(f.Ctx, other.ID, "owner@other.test", models.RoleOwner)

	deliverytest.CheckPacedApart(t, false, func(i int) error { return read[i%len(read)]() }, func() error {
		_, err := lists.ListOrgDeliveries(f.Ctx, paging.OrgQuery{OrgID: other.ID, ActorID: otherOwner.ID}, deliverylog.LogFilter{})
		return err
	})
}
