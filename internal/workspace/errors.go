package workspace

import "wds/internal/platform/problem"

// Operator errors, each with its problem category (which gives its HTTP status) and its code.
var (
	ErrInvalidOperatorToken = problem.New(problem.Unauthorized, "invalid_token", "unknown operator token")
	// ErrForbidden is an operator whose role in the org does not allow the operation.
	ErrForbidden = problem.New(problem.Forbidden, "forbidden", "the actor's role does not allow this operation")
)
