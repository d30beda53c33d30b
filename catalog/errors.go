package catalog

import "wds/problem"

// Vendor claim errors. Each unwraps to its problem category, which gives its HTTP status;
// api/errors.go gives its code.
var (
	// One answer for an unknown, used or expired token, so a guess learns nothing about which.
	ErrInvalidClaimToken    = problem.New(problem.BadRequest, "unknown, used or expired claim token")
	ErrVendorAlreadyClaimed = problem.New(problem.Conflict, "the vendor profile is already claimed")
)
