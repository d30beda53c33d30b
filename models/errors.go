package models

import (
	"errors"
	"fmt"
)

// Domain errors. Each is a sentinel tested with errors.Is; the HTTP layer's single table (api/errors.go)
// maps it to a status and an error code. Wrap one with Fail to add a detail for the caller.
var (
	ErrNotFound              = errors.New("not found")
	ErrValidation            = errors.New("a field is invalid")
	ErrInvalidJSON           = errors.New("body is not a JSON object")
	ErrPayloadTooLarge       = errors.New("body exceeds 1 MiB")
	ErrInvalidParameter      = errors.New("a query parameter is invalid")
	ErrInvalidCursor         = errors.New("cursor_at and cursor_id must be given together as an RFC 3339 time and a UUID")
	ErrMissingAuthorization  = errors.New("send the header Authorization: Bearer followed by your API key")
	ErrInvalidAPIKey         = errors.New("unknown, revoked or expired API key")
	ErrKeyRevoked            = errors.New("integration key revoked")
	ErrKeyExpired            = errors.New("integration key expired")
	ErrInsufficientScope     = errors.New("the key lacks the scope this endpoint needs")
	ErrIPNotAllowed          = errors.New("source address is not in the key's allowlist")
	ErrRateLimited           = errors.New("rate limit exceeded; retry after 60 seconds")
	ErrForbidden             = errors.New("the actor's role does not allow this operation")
	ErrInvalidOperatorToken  = errors.New("unknown operator token")
	ErrConflict              = errors.New("conflicts with an existing record")
	ErrWrongFormat           = errors.New("this endpoint does not accept the key's payload_format")
	ErrExternalIDRequired    = errors.New("external_id is required")
	ErrLinesRequired         = errors.New("lines is required and must not be empty")
	ErrPartialRefund         = errors.New("only full refunds are supported")
	ErrIdempotencyConflict   = errors.New("Idempotency-Key was used with a different body")
	ErrInvalidIdempotencyKey = errors.New("Idempotency-Key must be 1 to 255 characters")
	ErrAmountExceedsBalance  = errors.New("amount exceeds the order's open balance")
	ErrOrderNotPayable       = errors.New("order is cancelled or refunded")
	ErrOrderNotShippable     = errors.New("a cancelled or refunded order cannot be shipped")
	ErrInvalidClaimToken     = errors.New("unknown, used or expired claim token")
	ErrVendorAlreadyClaimed  = errors.New("the vendor profile is already claimed")
	ErrHTTPSRequired         = errors.New("webhook endpoint URLs must use https://")
	ErrURLNotAllowed         = errors.New("webhook endpoint URL resolves to a non-public address")
	ErrEndpointLimit         = errors.New("an org has at most 10 enabled webhook endpoints")
	ErrEndpointDisabled      = errors.New("webhook endpoint is disabled")
	ErrDeliveryNotDropped    = errors.New("only a dropped delivery can be re-fired")
	ErrSignatureUnconfigured = errors.New("the key requires a signature but has no signing secret on file")
	ErrNotReady              = errors.New("the service cannot serve requests yet")
)

// Error is a domain error with a caller-facing detail. Detail must never carry secret material.
type Error struct {
	Kind   error
	Detail string
}

func (e *Error) Error() string { return e.Detail }
func (e *Error) Unwrap() error { return e.Kind }

// Fail wraps a domain sentinel with a human-readable detail.
func Fail(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// Detail is the caller-facing text for err: the wrapped detail when there is one.
func Detail(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Detail
	}
	return err.Error()
}
