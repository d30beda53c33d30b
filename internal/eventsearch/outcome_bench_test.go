package eventsearch_test

import (
	"slices"
	"testing"
	"time"

	"wds/internal/eventsearch"
)

// BenchmarkOutcomeSearch measures the support desk's search by outcome on an org of 200,000 events,
// every one delivered, with a second org as large: a search that matches nothing (dropped) and one
// whose first page is full (succeeded). It reports each search's p99 (docs/benchmarks.md):
//
//	go test -run '^$' -bench OutcomeSearch -benchtime 200x ./internal/endpoints/
func BenchmarkOutcomeSearch(b *testing.B) {
	f := newFixture(b)
	ep := f.Endpoint("https://127.0.0.1/hook")
	f.DB.Exec("INSERT INTO orgs (id, name) VALUES (gen_random_uuid(), 'other')")
	err := f.DB.Exec(`INSERT INTO events (id, org_id, type, body, created_at, dispatched_at)
		SELECT gen_random_uuid(), o.id, 'order.created', '{}', now() - g * interval '1 second', now()
		FROM orgs o CROSS JOIN generate_series(1, 200000) g`).Error
	if err != nil {
		b.Fatal(err)
	}
	seedDeliveries(b, f, ep.ID, "succeeded")
	f.DB.Exec("ANALYZE")
	for _, o := range []eventsearch.Outcome{eventsearch.OutcomeDropped, eventsearch.OutcomeSucceeded} {
		b.Run(string(o), func(b *testing.B) {
			took := make([]time.Duration, 0, b.N)
			for range b.N {
				start := time.Now()
				if _, err := f.Events.ListEvents(f.Ctx, eventsearch.EventsQuery{OrgID: f.Org, Outcome: o, Limit: 50}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
