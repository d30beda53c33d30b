package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"wds/apikeys"
	"wds/catalog"
	"wds/database"
	"wds/delivery"
	"wds/fulfillment"
	"wds/ingest"
	"wds/models"
	"wds/problem"
	"wds/ratelimit"
	"wds/signing"
	"wds/workspace"
)

// Errors of the HTTP layer itself: reading the request and whether the service can serve it. Each
// unwraps to its problem category, which gives its HTTP status.
var (
	ErrInvalidJSON          = problem.New(problem.BadRequest, "body is not a JSON object")
	ErrPayloadTooLarge      = problem.New(problem.TooLarge, "body exceeds 1 MiB")
	ErrMissingAuthorization = problem.New(problem.Unauthorized, "send the header Authorization: Bearer followed by your API key")
	// ErrWrongFormat is an Integration API endpoint called with a key of another payload_format.
	ErrWrongFormat = problem.New(problem.BadRequest, "this endpoint does not accept the key's payload_format")
	ErrNotReady    = problem.New(problem.Unavailable, "the service cannot serve requests yet")
)

// errorRow gives a domain error its code. The HTTP status is the error's problem category's, so this
// table only names answers; a handler never invents a code or a status.
type errorRow struct {
	err  error
	code string
}

var errorTable = []errorRow{
	{ErrInvalidJSON, "invalid_json"},
	{ErrWrongFormat, "wrong_format"},
	{models.ErrInvalidParameter, "invalid_parameter"},
	{delivery.ErrInvalidParameter, "invalid_parameter"},
	{models.ErrInvalidCursor, "invalid_cursor"},
	{ingest.ErrInvalidIdempotencyKey, "invalid_idempotency_key"},
	{catalog.ErrInvalidClaimToken, "invalid_claim_token"},
	{ErrMissingAuthorization, "missing_authorization"},
	{apikeys.ErrInvalidAPIKey, "invalid_api_key"},
	{apikeys.ErrKeyRevoked, "integration_key_revoked"},
	{apikeys.ErrKeyExpired, "integration_key_expired"},
	{workspace.ErrInvalidOperatorToken, "invalid_token"},
	{signing.ErrSignatureMissing, "signature_missing"},
	{signing.ErrSignatureMalformed, "signature_malformed"},
	{signing.ErrSignatureExpired, "signature_expired"},
	{signing.ErrSignatureInvalid, "signature_invalid"},
	{apikeys.ErrSignatureUnconfigured, "signature_unconfigured"},
	{apikeys.ErrInsufficientScope, "insufficient_scope"},
	{apikeys.ErrIPNotAllowed, "ip_not_allowed"},
	{workspace.ErrForbidden, "forbidden"},
	{ingest.ErrIdempotencyConflict, "idempotency_conflict"},
	{ingest.ErrOrderNotPayable, "order_not_payable"},
	{fulfillment.ErrOrderNotShippable, "order_not_shippable"},
	{catalog.ErrVendorAlreadyClaimed, "vendor_already_claimed"},
	{delivery.ErrEndpointLimit, "endpoint_limit_reached"},
	{delivery.ErrEndpointDisabled, "endpoint_disabled"},
	{delivery.ErrDeliveryNotDropped, "delivery_not_dropped"},
	{delivery.ErrDeliveryInProgress, "delivery_in_progress"},
	{delivery.ErrRecoveryInProgress, "recovery_in_progress"},
	{ErrPayloadTooLarge, "payload_too_large"},
	{ingest.ErrExternalIDRequired, "external_id_required"},
	{ingest.ErrLinesRequired, "lines_required"},
	{ingest.ErrPartialRefund, "partial_refund_not_supported"},
	{ingest.ErrAmountExceedsBalance, "amount_exceeds_balance"},
	{delivery.ErrHTTPSRequired, "https_required"},
	{delivery.ErrURLNotAllowed, "url_not_allowed"},
	{ratelimit.ErrExceeded, "rate_limited"},
	{ErrNotReady, "not_ready"},
	// The categories a domain returns itself come last, so an error of theirs that a row above names
	// answers with that row's code.
	{problem.NotFound, "not_found"},
	{problem.Conflict, "conflict"},
	{problem.Invalid, "validation_failed"},
}

// errorBody is the failure shape of every API (docs/integration-api.md).
type errorBody struct {
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

// classify finds err's row; the category of the row's error gives the status, so an error joining two
// domain errors still answers with one row's status and code together. Anything unknown is an
// internal error whose detail stays in the log. A database that cannot do the work (down, restarting,
// too busy, a lock or deadline ran out) is a 503 the client may retry, never a 500.
func classify(err error) (int, errorBody) {
	if database.Unavailable(err) {
		return http.StatusServiceUnavailable, errorBody{Error: "unavailable",
			Detail: "the service's database could not do the work in time (unreachable, busy, or a lock or deadline ran out); nothing was written, retry shortly"}
	}
	for _, row := range errorTable {
		if errors.Is(err, row.err) {
			return problem.Status(row.err), errorBody{Error: row.code, Detail: problem.Detail(err)}
		}
	}
	return http.StatusInternalServerError, errorBody{Error: "internal_error", Detail: "internal error; it has been logged"}
}

// fail answers c with err in the error shape and stops the handler chain.
func fail(c *gin.Context, err error) {
	status, body := classify(err)
	if status >= http.StatusInternalServerError {
		_ = c.Error(err) // the request logger reports it: a defect, or why the database could not serve
	}
	switch {
	case status == http.StatusTooManyRequests:
		c.Header("Retry-After", "60")
	case body.Error == "unavailable":
		c.Header("Retry-After", "5")
	}
	c.AbortWithStatusJSON(status, body)
}

// ErrorCode gives the snake_case code and detail the APIs would answer for err, so the CLI reports
// failures with the same codes.
func ErrorCode(err error) (code, detail string) {
	_, body := classify(err)
	if body.Error == "internal_error" {
		return body.Error, err.Error()
	}
	return body.Error, body.Detail
}

// Answer is the status, code and detail the APIs answer for err, so the console shows a failure as
// they would; an internal error's detail stays in the log.
func Answer(err error) (status int, code, detail string) {
	status, body := classify(err)
	return status, body.Error, body.Detail
}
