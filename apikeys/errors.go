package apikeys

import "wds/problem"

// API key errors: authenticating a key and what the key allows. Each unwraps to its problem category,
// which gives its HTTP status; api/errors.go gives its code.
var (
	// One answer for an unknown, malformed or wrong-prefix key, so a guess learns nothing about which.
	ErrInvalidAPIKey         = problem.New(problem.Unauthorized, "unknown, revoked or expired API key")
	ErrKeyRevoked            = problem.New(problem.Unauthorized, "integration key revoked")
	ErrKeyExpired            = problem.New(problem.Unauthorized, "integration key expired")
	ErrSignatureUnconfigured = problem.New(problem.Unauthorized, "the key requires a signature but has no signing secret on file")

	ErrInsufficientScope = problem.New(problem.Forbidden, "the key lacks the scope this endpoint needs")
	ErrIPNotAllowed      = problem.New(problem.Forbidden, "source address is not in the key's allowlist")
)
