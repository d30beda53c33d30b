package eventsearch_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/eventsearch"
	"wds/internal/platform/ratelimit"
	"wds/test/deliverytest"
)

// An org searching its events in a loop takes its own turns, one search at a time: twenty searches
// at once against a pace of ten a second with half a second of queue get ten turns at once, five
// after waiting theirs and five refused as rate_limited, while another org's search, asked meanwhile,
// answers without waiting behind them.
func TestAnOrgsEventSearchesArePacedApartFromOtherOrgs(t *testing.T) {
	f := newFixture(t)
	events := eventsearch.NewService(f.DB, f.Box, ratelimit.NewPacer(10, 500*time.Millisecond, nil))
	search := func(org uuid.UUID) error {
		_, err := events.ListEvents(f.Ctx, eventsearch.EventsQuery{OrgID: org, Outcome: eventsearch.OutcomeDropped, Limit: 50})
		return err
	}
	deliverytest.CheckPacedApart(t, true, func(int) error { return search(f.Org) }, func() error { return search(uuid.New()) })
}
