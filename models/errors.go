package models

import "wds/problem"

// Domain errors. Each is a sentinel tested with errors.Is that unwraps to its problem category, which
// carries its HTTP status; the HTTP layer's single table (api/errors.go) gives it an error code. Wrap
// one with Fail to add a detail for the caller.
var (
	ErrInvalidJSON          = problem.New(problem.BadRequest, "body is not a JSON object")
	ErrPayloadTooLarge      = problem.New(problem.TooLarge, "body exceeds 1 MiB")
	ErrInvalidParameter     = problem.New(problem.BadRequest, "a query parameter is invalid")
	ErrInvalidCursor        = problem.New(problem.BadRequest, "cursor_at and cursor_id must be given together as an RFC 3339 time and a UUID")
	ErrMissingAuthorization = problem.New(problem.Unauthorized, "send the header Authorization: Bearer followed by your API key")
	ErrRateLimited          = problem.New(problem.RateLimited, "rate limit exceeded; retry after 60 seconds")
	ErrWrongFormat          = problem.New(problem.BadRequest, "this endpoint does not accept the key's payload_format")
	ErrNotReady             = problem.New(problem.Unavailable, "the service cannot serve requests yet")
)
