package delivery

import "wds/problem"

// Webhook endpoint and delivery errors, each with its problem category (which gives its HTTP status)
// and its code.
var (
	// An endpoint URL must be https:// and resolve to public addresses only.
	ErrHTTPSRequired = problem.New(problem.Invalid, "https_required", "webhook endpoint URLs must use https://")
	ErrURLNotAllowed = problem.New(problem.Invalid, "url_not_allowed", "webhook endpoint URL resolves to a non-public address")

	ErrEndpointLimit      = problem.New(problem.Conflict, "endpoint_limit_reached", "an org has at most 10 enabled webhook endpoints")
	ErrEndpointDisabled   = problem.New(problem.Conflict, "endpoint_disabled", "webhook endpoint is disabled")
	ErrDeliveryNotDropped = problem.New(problem.Conflict, "delivery_not_dropped", "only a dropped delivery can be re-fired")
)
