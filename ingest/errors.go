package ingest

import "wds/problem"

// Order, payment and idempotency errors of the Integration API. Each unwraps to its problem category,
// which gives its HTTP status; api/errors.go gives its code.
var (
	ErrExternalIDRequired   = problem.New(problem.Invalid, "external_id is required")
	ErrLinesRequired        = problem.New(problem.Invalid, "lines is required and must not be empty")
	ErrPartialRefund        = problem.New(problem.Invalid, "only full refunds are supported")
	ErrAmountExceedsBalance = problem.New(problem.Invalid, "amount exceeds the order's open balance")
	ErrOrderNotPayable      = problem.New(problem.Conflict, "order is cancelled or refunded")

	ErrInvalidIdempotencyKey = problem.New(problem.BadRequest, "Idempotency-Key must be 1 to 255 characters")
	ErrIdempotencyConflict   = problem.New(problem.Conflict, "Idempotency-Key was used with a different body")
)
