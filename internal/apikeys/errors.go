package apikeys

import "wds/internal/platform/problem"

// API key errors: authenticating a key and what the key allows. Each unwraps to its problem category,
// which gives its HTTP status; each carries its code.
var (
	// One answer for an unknown, malformed or wrong-prefix key, so a guess learns nothing about which.
	ErrInvalidAPIKey         = problem.New(problem.Unauthorized, "invalid_api_key", "unknown, revoked or expired API key")
	ErrKeyRevoked            = problem.New(problem.Unauthorized, "integration_key_revoked", "integration key revoked")
	ErrKeyExpired            = problem.New(problem.Unauthorized, "integration_key_expired", "integration key expired")
	ErrSignatureUnconfigured = problem.New(problem.Unauthorized, "signature_unconfigured", "the key requires a signature but has no signing secret on file")

	ErrInsufficientScope = problem.New(problem.Forbidden, "insufficient_scope", "the key lacks the scope this endpoint needs")
	ErrIPNotAllowed      = problem.New(problem.Forbidden, "ip_not_allowed", "source address is not in the key's allowlist")
)
