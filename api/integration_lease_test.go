package api_test

import (
	"net/http"
	"testing"
	"time"

	"wds/api"
	"wds/internal/apikeys"
	"wds/internal/platform/ratelimit"
)

// TestIntegrationRateLimitLeaseServesWithoutTheDatabaseAndFailsClosed: a busy key's requests are
// admitted from the instance's lease with no call to the limiter (here its lock is held, so any call
// would wait), and the request that needs a new lease while the limiter cannot answer is refused
// with 503 unavailable, not admitted; what was refused is not counted.
func TestIntegrationRateLimitLeaseServesWithoutTheDatabaseAndFailsClosed(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{RateLimit: 600})
	hurried := e.instance(func(d *api.Deps) { d.RequestTimeout = 500 * time.Millisecond })
	lease := ratelimit.MaxLease(600)
	// Leases of 1, 2, 4 and 8 spent whole make the next one MaxLease; its first request spends one.
	if got := hurried.admittedOf(k, 16); got != 16 {
		t.Fatalf("admitted %d of 16", got)
	}
	release := e.holdKeyLimit(t, k)
	r, took := within(t, 8*time.Second, release, func() int { return hurried.admittedOf(k, lease-1) })
	if r != lease-1 || took > 400*time.Millisecond {
		t.Fatalf("the rest of the lease: %d of %d admitted in %s, want all at once without the database", r, lease-1, took)
	}
	res, _ := within(t, 8*time.Second, release, func() resp { return hurried.get(rateLimitedPath, k) })
	wantUnavailable(t, res.status, res.body, res.header)
	release()
	if res := hurried.get(rateLimitedPath, k); res.status != http.StatusNotFound {
		t.Fatalf("after the outage: %d %s, want the request admitted", res.status, res.body)
	}
}
