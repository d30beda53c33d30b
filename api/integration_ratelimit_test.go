package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"wds/api"
	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/test/apitest"
)

const rateLimitedPath = "/integrations/v1/orders/by-external/x"

// secondInstance is another router over the env's database and clock: another `wds serve`.
func (e *intEnv) secondInstance() *intEnv {
	e.t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	r, err := api.NewRouter(api.Deps{Services: apitest.Services(e.db, e.box, nil), Log: log, Now: e.clock.Now})
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
			if res, err := openapitest.Client(t, nil).Do(req); err == nil {
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

// TestIntegrationRateLimitRefusesWhenItCannotCount: a limiter whose call fails for a defect (here
// its function is missing) refuses every request, as a 500 that is logged; it never admits them
// unlimited.
func TestIntegrationRateLimitRefusesWhenItCannotCount(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{RateLimit: 1})
	if err := e.db.Exec(`DROP FUNCTION wds_rate_limit_admit(uuid, timestamptz, integer, boolean)`).Error; err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.get(rateLimitedPath, k).want(t, http.StatusInternalServerError, "internal_error")
	}
}

// holdKeyLimit holds key's rate-limit lock (the advisory lock wds_rate_limit_admit serialises a
// key's callers with) in a transaction of its own: the limiter's next call for the key waits.
func (e *intEnv) holdKeyLimit(t *testing.T, k intKey) (release func()) {
	t.Helper()
	return holding(t, e.db, `SELECT pg_advisory_xact_lock(1919706220, hashtext(?::text))`, k.ID)
}

// limiterWaiting reports whether a backend of the env's database waits for a rate-limit lock.
func (e *intEnv) limiterWaiting() bool {
	var n int64
	e.db.Raw(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n)
	return n > 0
}

// TestIntegrationRateLimitFailsClosed: when the limiter cannot count a request, because its
// database call ran into the request's deadline or lost its connection, the request is refused
// with 503 unavailable and Retry-After, not admitted unlimited; and the refused requests do not
// count, so once the database answers the key has exactly its limit.
func TestIntegrationRateLimitFailsClosed(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{RateLimit: 3})
	logs := &syncBuffer{}
	hurried := e.instance(func(d *api.Deps) {
		d.RequestTimeout = 500 * time.Millisecond
		d.Log.(*logrus.Logger).SetOutput(logs)
		d.Log.(*logrus.Logger).SetFormatter(&logrus.JSONFormatter{})
	})

	// The limiter's call is stuck behind the key's lock until the request's deadline.
	release := e.holdKeyLimit(t, k)
	r, _ := within(t, 8*time.Second, release, func() resp { return hurried.get(rateLimitedPath, k) })
	wantUnavailable(t, r.status, r.body, r.header)
	if !strings.Contains(logs.String(), "rate limit of key") {
		t.Errorf("the request log does not say why the request was refused:\n%s", logs.String())
	}
	if e.limiterWaiting() { // it would count the request once the lock is free
		t.Error("the cut-off limiter call still waits in PostgreSQL")
	}

	// The database drops the limiter's connection mid-call (a restart, a failover).
	answered := make(chan resp, 1)
	go func() { answered <- e.get(rateLimitedPath, k) }()
	waitUntil(t, "the limiter to wait for the key's lock", e.limiterWaiting)
	if err := e.db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Error; err != nil {
		t.Fatal(err)
	}
	r, _ = within(t, 8*time.Second, release, func() resp { return <-answered })
	wantUnavailable(t, r.status, r.body, r.header)
	release()

	// None of the refused requests counted, and the limit holds again at once.
	if got := e.admittedOf(k, 5); got != 3 {
		t.Fatalf("after the outage %d of 5 admitted at limit 3", got)
	}
}

// A client that hangs up while the limiter waits is let go: no answer is owed, nothing counted.
func TestIntegrationRateLimitLetsAHungUpClientGo(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{RateLimit: 1})
	logs := &syncBuffer{}
	logged := e.instance(func(d *api.Deps) {
		d.Log.(*logrus.Logger).SetOutput(logs)
		d.Log.(*logrus.Logger).SetFormatter(&logrus.JSONFormatter{})
	})
	release := e.holdKeyLimit(t, k)
	ctx, hangUp := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, logged.srv.URL+rateLimitedPath, nil)
		req.Header.Set("Authorization", "Bearer "+k.token)
		res, err := openapitest.Client(t, nil).Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	waitUntil(t, "the limiter to wait for the key's lock", e.limiterWaiting)
	hangUp()
	if err := <-done; err == nil {
		t.Fatal("the request was answered after its client hung up")
	}
	waitUntil(t, "the request's log line", func() bool { return strings.Contains(logs.String(), `"status":499`) })
	if e.limiterWaiting() { // it would count the request once the lock is free
		t.Error("the abandoned limiter call still waits in PostgreSQL")
	}
	if strings.Contains(logs.String(), `"status":503`) {
		t.Errorf("a client that hung up was logged as an outage:\n%s", logs.String())
	}
	release()
	if got := e.admittedOf(k, 2); got != 1 {
		t.Fatalf("%d of 2 admitted at limit 1 after the hang-up", got)
	}
}

// waitUntil polls cond for up to 30 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
