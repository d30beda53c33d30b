package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"wds/api"
	"wds/apikeys"
)

const rateLimitedPath = "/integrations/v1/orders/by-external/x"

// secondInstance is another router over the env's database and clock: another `wds serve`.
func (e *intEnv) secondInstance() *intEnv {
	e.t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	r, err := api.NewRouter(api.Deps{DB: e.db, Log: log, Now: e.clock.Now, Box: e.box})
	if err != nil {
		e.t.Fatal(err)
	}
	other := *e
	other.router = r
	other.srv = httptest.NewServer(r)
	e.t.Cleanup(other.srv.Close)
	return &other
}

// admittedOf sends n requests of k and counts those that got past the rate limit (the path answers
// not_found); every other answer must be 429 with Retry-After: 60.
func (e *intEnv) admittedOf(k intKey, n int) int {
	e.t.Helper()
	got := 0
	for range n {
		r := e.get(rateLimitedPath, k)
		if r.status == http.StatusNotFound {
			got++
			continue
		}
		r.want(e.t, http.StatusTooManyRequests, "rate_limited")
		if ra := r.header.Get("Retry-After"); ra != "60" {
			e.t.Fatalf("Retry-After %q, want 60", ra)
		}
	}
	return got
}

func TestIntegrationRateLimitExactPerWindow(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{RateLimit: 5})
	other := e.mint(apikeys.NewIntegrationKey{RateLimit: 5})
	if got := e.admittedOf(k, 8); got != 5 {
		t.Fatalf("admitted %d of 8 at limit 5", got)
	}
	if got := e.admittedOf(other, 5); got != 5 {
		t.Fatalf("another key admitted %d of 5: limits are per key", got)
	}
}

func TestIntegrationRateLimitSharedByInstances(t *testing.T) {
	e := newIntEnv(t)
	e2 := e.secondInstance()
	k := e.mint(apikeys.NewIntegrationKey{RateLimit: 4})
	if e.admittedOf(k, 2)+e2.admittedOf(k, 2) != 4 {
		t.Fatal("the first four requests across two instances were not all admitted")
	}
	if got := e.admittedOf(k, 3) + e2.admittedOf(k, 3); got != 0 {
		t.Fatalf("admitted %d more across two instances at limit 4: instances must share one budget", got)
	}
}

func TestIntegrationRateLimitConcurrent(t *testing.T) {
	e := newIntEnv(t)
	e2 := e.secondInstance()
	k := e.mint(apikeys.NewIntegrationKey{RateLimit: 20})
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	for i := range 50 {
		url := []string{e.srv.URL, e2.srv.URL}[i%2] + rateLimitedPath
		wg.Go(func() {
			status := 0 // a transport error
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+k.token)
			if res, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				status = res.StatusCode
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[http.StatusNotFound] != 20 || statuses[http.StatusTooManyRequests] != 30 {
		t.Fatalf("50 concurrent requests at limit 20 over two instances: statuses %v, want 20 admitted (404) and 30 refused (429)", statuses)
	}
}

func TestIntegrationRateLimitSlidesAndIgnoresRefusals(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{RateLimit: 3})
	if got := e.admittedOf(k, 2); got != 2 {
		t.Fatalf("admitted %d of 2", got)
	}
	e.clock.Add(30 * time.Second)
	if got := e.admittedOf(k, 6); got != 1 { // five refusals, none counted
		t.Fatalf("admitted %d of 6 with 2 of 3 used", got)
	}
	e.clock.Add(30 * time.Second) // the first two age out, the one at 30 s still counts
	if got := e.admittedOf(k, 3); got != 2 {
		t.Fatalf("admitted %d of 3 a minute after the first two: refusals counted or the window did not slide", got)
	}
	e.clock.Add(60 * time.Second)
	if got := e.admittedOf(k, 4); got != 3 {
		t.Fatalf("admitted %d of 4 after a quiet minute", got)
	}
}

// TestIntegrationRateLimitFailsOpen: a limiter that cannot reach its table admits, so a limiter
// outage does not take the write API down.
func TestIntegrationRateLimitFailsOpen(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{RateLimit: 1})
	if err := e.db.Exec(`DROP FUNCTION wds_rate_limit_admit(uuid, timestamptz, integer, boolean)`).Error; err != nil {
		t.Fatal(err)
	}
	if got := e.admittedOf(k, 3); got != 3 {
		t.Fatalf("admitted %d of 3 with the limiter down, want all", got)
	}
}
