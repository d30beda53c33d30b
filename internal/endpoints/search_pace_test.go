package endpoints_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/platform/problem"
	"wds/internal/platform/ratelimit"
)

// An org searching its events in a loop takes its own turns, one search at a time: twenty searches
// at once against a pace of ten a second with half a second of queue get ten turns at once, five
// after waiting theirs and five refused as rate_limited, while another org's search, asked meanwhile,
// answers without waiting behind them.
func TestAnOrgsEventSearchesArePacedApartFromOtherOrgs(t *testing.T) {
	f := newFixture(t)
	f.Svc.Searches = ratelimit.NewPacer(10, 500*time.Millisecond, nil)
	search := func(org uuid.UUID) error {
		_, err := f.Svc.ListEvents(f.Ctx, endpoints.EventsQuery{OrgID: org, Outcome: endpoints.OutcomeDropped, Limit: 50})
		return err
	}
	start := time.Now()
	var mu sync.Mutex
	var answered, refused int
	var last time.Duration
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			err := search(f.Org)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				answered++
				last = max(last, time.Since(start))
			case errors.Is(err, problem.RateLimited):
				refused++
			default:
				t.Error(err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	other := time.Now()
	if err := search(uuid.New()); err != nil {
		t.Fatal(err)
	}
	otherTook := time.Since(other)
	wg.Wait()
	if answered != 15 || refused != 5 {
		t.Fatalf("%d answered, %d refused; want 15 and 5", answered, refused)
	}
	if last < 450*time.Millisecond {
		t.Fatalf("the org's last search answered after %s, before its turn at 500ms", last)
	}
	if otherTook > 400*time.Millisecond {
		t.Fatalf("another org's search took %s while the first org's waited their turns", otherTook)
	}
}
