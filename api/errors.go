package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"wds/database"
	"wds/models"
	"wds/signing"
)

// errorRow maps a domain error to its HTTP answer. This table is the only place status codes for
// domain errors are chosen (a handler never invents one).
type errorRow struct {
	err    error
	status int
	code   string
}

var errorTable = []errorRow{
	{models.ErrInvalidJSON, http.StatusBadRequest, "invalid_json"},
	{models.ErrWrongFormat, http.StatusBadRequest, "wrong_format"},
	{models.ErrInvalidParameter, http.StatusBadRequest, "invalid_parameter"},
	{models.ErrInvalidCursor, http.StatusBadRequest, "invalid_cursor"},
	{models.ErrInvalidIdempotencyKey, http.StatusBadRequest, "invalid_idempotency_key"},
	{models.ErrInvalidClaimToken, http.StatusBadRequest, "invalid_claim_token"},
	{models.ErrMissingAuthorization, http.StatusUnauthorized, "missing_authorization"},
	{models.ErrInvalidAPIKey, http.StatusUnauthorized, "invalid_api_key"},
	{models.ErrKeyRevoked, http.StatusUnauthorized, "integration_key_revoked"},
	{models.ErrKeyExpired, http.StatusUnauthorized, "integration_key_expired"},
	{models.ErrInvalidOperatorToken, http.StatusUnauthorized, "invalid_token"},
	{signing.ErrSignatureMissing, http.StatusUnauthorized, "signature_missing"},
	{signing.ErrSignatureMalformed, http.StatusUnauthorized, "signature_malformed"},
	{signing.ErrSignatureExpired, http.StatusUnauthorized, "signature_expired"},
	{signing.ErrSignatureInvalid, http.StatusUnauthorized, "signature_invalid"},
	{models.ErrSignatureUnconfigured, http.StatusUnauthorized, "signature_unconfigured"},
	{models.ErrInsufficientScope, http.StatusForbidden, "insufficient_scope"},
	{models.ErrIPNotAllowed, http.StatusForbidden, "ip_not_allowed"},
	{models.ErrForbidden, http.StatusForbidden, "forbidden"},
	{models.ErrNotFound, http.StatusNotFound, "not_found"},
	{models.ErrConflict, http.StatusConflict, "conflict"},
	{models.ErrIdempotencyConflict, http.StatusConflict, "idempotency_conflict"},
	{models.ErrOrderNotPayable, http.StatusConflict, "order_not_payable"},
	{models.ErrOrderNotShippable, http.StatusConflict, "order_not_shippable"},
	{models.ErrVendorAlreadyClaimed, http.StatusConflict, "vendor_already_claimed"},
	{models.ErrEndpointLimit, http.StatusConflict, "endpoint_limit_reached"},
	{models.ErrEndpointDisabled, http.StatusConflict, "endpoint_disabled"},
	{models.ErrDeliveryNotDropped, http.StatusConflict, "delivery_not_dropped"},
	{models.ErrPayloadTooLarge, http.StatusRequestEntityTooLarge, "payload_too_large"},
	{models.ErrValidation, http.StatusUnprocessableEntity, "validation_failed"},
	{models.ErrExternalIDRequired, http.StatusUnprocessableEntity, "external_id_required"},
	{models.ErrLinesRequired, http.StatusUnprocessableEntity, "lines_required"},
	{models.ErrPartialRefund, http.StatusUnprocessableEntity, "partial_refund_not_supported"},
	{models.ErrAmountExceedsBalance, http.StatusUnprocessableEntity, "amount_exceeds_balance"},
	{models.ErrHTTPSRequired, http.StatusUnprocessableEntity, "https_required"},
	{models.ErrURLNotAllowed, http.StatusUnprocessableEntity, "url_not_allowed"},
	{models.ErrRateLimited, http.StatusTooManyRequests, "rate_limited"},
	{models.ErrNotReady, http.StatusServiceUnavailable, "not_ready"},
}

// errorBody is the failure shape of every API (docs/integration-api.md).
type errorBody struct {
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

// classify finds err's row; anything unknown is an internal error whose detail stays in the log. A
// database that cannot do the work (down, restarting, too busy, a lock or deadline ran out) is a 503
// the client may retry, never a 500.
func classify(err error) (int, errorBody) {
	if database.Unavailable(err) {
		return http.StatusServiceUnavailable, errorBody{Error: "unavailable",
			Detail: "the service's database could not do the work in time (unreachable, busy, or a lock or deadline ran out); nothing was written, retry shortly"}
	}
	for _, row := range errorTable {
		if errors.Is(err, row.err) {
			return row.status, errorBody{Error: row.code, Detail: models.Detail(err)}
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
