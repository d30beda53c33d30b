package endpoints

import "wds/internal/platform/problem"

// Webhook endpoint and delivery errors, each with its problem category (which gives its HTTP status)
// and its code.
var (
	// An endpoint URL must be https:// and resolve to public addresses only.
	ErrHTTPSRequired = problem.New(problem.Invalid, "https_required", "webhook endpoint URLs must use https://")
	ErrURLNotAllowed = problem.New(problem.Invalid, "url_not_allowed", "webhook endpoint URL resolves to a non-public address")

	ErrEndpointLimit    = problem.New(problem.Conflict, "endpoint_limit_reached", "an org has at most 10 enabled webhook endpoints")
	ErrEndpointDisabled = problem.New(problem.Conflict, "endpoint_disabled", "webhook endpoint is disabled")

	// ErrInvalidParameter is a support-desk parameter that is well formed but not acceptable: a
	// custom header the service sets itself, a time window out of order, an endpoint not subscribed.
	ErrInvalidParameter = problem.New(problem.Invalid, "invalid_parameter", "a parameter is not acceptable")
)
