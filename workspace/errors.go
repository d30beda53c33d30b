package workspace

import "wds/problem"

// Operator errors. Each unwraps to its problem category, which gives its HTTP status; api/errors.go
// gives its code.
var (
	ErrInvalidOperatorToken = problem.New(problem.Unauthorized, "unknown operator token")
	// ErrForbidden is an operator whose role in the org does not allow the operation.
	ErrForbidden = problem.New(problem.Forbidden, "the actor's role does not allow this operation")
)
