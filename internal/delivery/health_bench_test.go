package delivery_test

import (
	"fmt"
	"testing"
	"time"

	"wds/internal/delivery"
)

// BenchmarkHealthOfALongOutage measures auto-disable's decision (an endpoint failing for less than
// WDS_WEBHOOK_DISABLE_AFTER, so it reads and keeps it) and the endpoint list, on an endpoint whose
// delivery log holds an outage of 200,000 and then of 1,000,000 dropped chains of the last 20 hours,
// one attempt each (an endpoint at max_attempts=1 answering 500) (docs/benchmarks.md):
//
//	go test -run '^$' -bench HealthOfALongOutage -benchtime 20x ./internal/endpoints/
func BenchmarkHealthOfALongOutage(b *testing.B) {
	for _, outage := range []int{200_000, 1_000_000} {
		b.Run(fmt.Sprint(outage), func(b *testing.B) { benchmarkHealth(b, outage) })
	}
}

func benchmarkHealth(b *testing.B, outage int) {
	f := newFixture(b)
	ep := f.Endpoint("https://127.0.0.1/hook")
	seedOutage(b, f, ep.ID, outage)
	b.Run("auto-disable", func(b *testing.B) {
		for range b.N {
			if _, err := delivery.DisableIfFailing(f.Ctx, f.DB, ep.ID, 1000*time.Hour, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list", func(b *testing.B) {
		for range b.N {
			list, err := f.Svc.List(f.Ctx, f.Org, nil)
			if err != nil || list[0].Health.ConsecutiveDropped != int64(outage) {
				b.Fatalf("%+v %v", list[0].Health, err)
			}
		}
	})
}
