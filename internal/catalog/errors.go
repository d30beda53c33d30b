package catalog

import "wds/internal/platform/problem"

// Vendor claim errors, each with its problem category (which gives its HTTP status) and its code.
var (
	// One answer for an unknown, used or expired token, so a guess learns nothing about which.
	ErrInvalidClaimToken    = problem.New(problem.BadRequest, "invalid_claim_token", "unknown, used or expired claim token")
	ErrVendorAlreadyClaimed = problem.New(problem.Conflict, "vendor_already_claimed", "the vendor profile is already claimed")
)
