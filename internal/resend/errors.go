package resend

import "wds/internal/platform/problem"

// Re-fire and resend errors, each with its problem category (which gives its HTTP status) and its
// code.
var (
	ErrDeliveryNotDropped = problem.New(problem.Conflict, "delivery_not_dropped", "only a dropped delivery can be re-fired")
	ErrDeliveryInProgress = problem.New(problem.Conflict, "delivery_in_progress", "a chain of this event to this endpoint is still in progress")
)
