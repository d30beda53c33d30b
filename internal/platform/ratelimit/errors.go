package ratelimit

import "wds/internal/platform/problem"

// ErrExceeded is a request over its key's limit for the current Window; the API tells the caller to
// retry after one Window. It unwraps to its problem category, which gives its HTTP status, and
// carries its code.
var ErrExceeded = problem.New(problem.RateLimited, "rate_limited", "rate limit exceeded; retry after 60 seconds")
