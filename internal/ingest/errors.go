package ingest

import "wds/internal/platform/problem"

// Order, payment and idempotency errors of the Integration API. Each unwraps to its problem category,
// which gives its HTTP status; each carries its code.
var (
	ErrExternalIDRequired   = problem.New(problem.Invalid, "external_id_required", "external_id is required")
	ErrLinesRequired        = problem.New(problem.Invalid, "lines_required", "lines is required and must not be empty")
	ErrPartialRefund        = problem.New(problem.Invalid, "partial_refund_not_supported", "only full refunds are supported")
	ErrAmountExceedsBalance = problem.New(problem.Invalid, "amount_exceeds_balance", "amount exceeds the order's open balance")
	ErrOrderNotPayable      = problem.New(problem.Conflict, "order_not_payable", "order is cancelled or refunded")

	ErrInvalidIdempotencyKey = problem.New(problem.BadRequest, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 characters")
	ErrIdempotencyConflict   = problem.New(problem.Conflict, "idempotency_conflict", "Idempotency-Key was used with a different body")
)
