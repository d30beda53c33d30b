package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"wds/api/signing"
	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/endpoints"
	"wds/internal/feed"
	"wds/internal/fulfillment"
	"wds/internal/ingest"
	"wds/internal/platform/answer"
	"wds/internal/platform/database"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/platform/ratelimit"
	"wds/internal/recovery"
	"wds/internal/resend"
	"wds/internal/versions"
	"wds/internal/workspace"
)

// errorPins is every answer a declared error or a category gives: the error, its text (the detail when it is
// returned bare), and the status and code the APIs answer with. Moving an error to another package
// changes only its name here; a changed status, code or text is a changed API.
var errorPins = []struct {
	err    error
	text   string
	status int
	code   string
}{
	{answer.ErrInvalidJSON, "body is not a JSON object", 400, "invalid_json"},
	{ErrWrongFormat, "this endpoint does not accept the key's payload_format", 400, "wrong_format"},
	{paging.ErrInvalidParameter, "a query parameter is invalid", 400, "invalid_parameter"},
	{paging.ErrInvalidCursor, "cursor_at and cursor_id must be given together as an RFC 3339 time and a UUID", 400, "invalid_cursor"},
	{ingest.ErrInvalidIdempotencyKey, "Idempotency-Key must be 1 to 255 characters", 400, "invalid_idempotency_key"},
	{catalog.ErrInvalidClaimToken, "unknown, used or expired claim token", 400, "invalid_claim_token"},
	{ErrMissingAuthorization, "send the header Authorization: Bearer followed by your API key", 401, "missing_authorization"},
	{apikeys.ErrInvalidAPIKey, "unknown, revoked or expired API key", 401, "invalid_api_key"},
	{apikeys.ErrKeyRevoked, "integration key revoked", 401, "integration_key_revoked"},
	{apikeys.ErrKeyExpired, "integration key expired", 401, "integration_key_expired"},
	{workspace.ErrInvalidOperatorToken, "unknown operator token", 401, "invalid_token"},
	{signing.ErrSignatureMissing, "signing: signature missing", 401, "signature_missing"},
	{signing.ErrSignatureMalformed, "signing: signature malformed", 401, "signature_malformed"},
	{signing.ErrSignatureExpired, "signing: signature expired", 401, "signature_expired"},
	{signing.ErrSignatureInvalid, "signing: signature invalid", 401, "signature_invalid"},
	{apikeys.ErrSignatureUnconfigured, "the key requires a signature but has no signing secret on file", 401, "signature_unconfigured"},
	{apikeys.ErrInsufficientScope, "the key lacks the scope this endpoint needs", 403, "insufficient_scope"},
	{apikeys.ErrIPNotAllowed, "source address is not in the key's allowlist", 403, "ip_not_allowed"},
	{workspace.ErrForbidden, "the actor's role does not allow this operation", 403, "forbidden"},
	{problem.NotFound, "not found", 404, "not_found"},
	{feed.ErrIteratorExpired, "the iterator is older than the events kept", 410, "iterator_expired"},
	{problem.Conflict, "conflicts with an existing record", 409, "conflict"},
	{ingest.ErrIdempotencyConflict, "Idempotency-Key was used with a different body", 409, "idempotency_conflict"},
	{ingest.ErrOrderNotPayable, "order is cancelled or refunded", 409, "order_not_payable"},
	{fulfillment.ErrOrderNotShippable, "a cancelled or refunded order cannot be shipped", 409, "order_not_shippable"},
	{catalog.ErrVendorAlreadyClaimed, "the vendor profile is already claimed", 409, "vendor_already_claimed"},
	{endpoints.ErrEndpointLimit, "an org has at most 10 enabled webhook endpoints", 409, "endpoint_limit_reached"},
	{endpoints.ErrEndpointDisabled, "webhook endpoint is disabled", 409, "endpoint_disabled"},
	{resend.ErrDeliveryNotDropped, "only a dropped delivery can be re-fired", 409, "delivery_not_dropped"},
	{resend.ErrDeliveryInProgress, "a chain of this event to this endpoint is still in progress", 409, "delivery_in_progress"},
	{recovery.ErrRecoveryInProgress, "a recovery of this endpoint is still running", 409, "recovery_in_progress"},
	{answer.ErrPayloadTooLarge, "body exceeds 1 MiB", 413, "payload_too_large"},
	{problem.Invalid, "a field is invalid", 422, "validation_failed"},
	{ingest.ErrExternalIDRequired, "external_id is required", 422, "external_id_required"},
	{ingest.ErrLinesRequired, "lines is required and must not be empty", 422, "lines_required"},
	{ingest.ErrPartialRefund, "only full refunds are supported", 422, "partial_refund_not_supported"},
	{ingest.ErrAmountExceedsBalance, "amount exceeds the order's open balance", 422, "amount_exceeds_balance"},
	{endpoints.ErrHTTPSRequired, "webhook endpoint URLs must use https://", 422, "https_required"},
	{endpoints.ErrURLNotAllowed, "webhook endpoint URL resolves to a non-public address", 422, "url_not_allowed"},
	{endpoints.ErrInvalidParameter, "a parameter is not acceptable", 422, "invalid_parameter"},
	{ratelimit.ErrExceeded, "rate limit exceeded; retry after 60 seconds", 429, "rate_limited"},
	{ErrNotReady, "the service cannot serve requests yet", 503, "not_ready"},
	{versions.ErrTemporalUnavailable, "Temporal cannot be reached now", 503, "temporal_unavailable"},
}

// TestErrorTablePinned holds every error's answer to what it was before errors moved to their
// domains: bare, with a detail, and wrapped by a caller's context.
func TestErrorTablePinned(t *testing.T) {
	pinned := map[error]bool{}
	for _, p := range errorPins {
		pinned[p.err] = true
	}
	for _, d := range problem.Declared() {
		if !pinned[d] {
			t.Errorf("%q is declared but not pinned: pin the new error's answer", d)
		}
	}
	for _, p := range errorPins {
		t.Run(p.code, func(t *testing.T) {
			wrapped := fmt.Errorf("while doing it: %w", p.err)
			detailed := problem.Fail(p.err, "why %d", 7)
			for _, c := range []struct {
				err    error
				detail string
			}{
				{p.err, p.text},
				{wrapped, "while doing it: " + p.text},
				{detailed, "why 7"},
				{fmt.Errorf("outer: %w", detailed), "why 7"},
			} {
				status, code, detail := answer.Of(c.err)
				if status != p.status || code != p.code || detail != c.detail {
					t.Errorf("answer.Of(%q) = %d %s %q, want %d %s %q", c.err, status, code, detail, p.status, p.code, c.detail)
				}
				if code, detail := answer.Code(c.err); code != p.code || detail != c.detail {
					t.Errorf("answer.Code(%q) = %s %q, want %s %q", c.err, code, detail, p.code, c.detail)
				}
			}
		})
	}
}

// TestErrorAnswersOutsideTheTable pins what no row decides: a database that cannot do the work is a
// retryable 503, and anything else an internal error whose detail stays in the log (the CLI shows it).
func TestErrorAnswersOutsideTheTable(t *testing.T) {
	busy := fmt.Errorf("create order: %w", database.ErrBusy)
	if status, code, detail := answer.Of(busy); status != 503 || code != "unavailable" ||
		detail != "the service's database could not do the work in time (unreachable, busy, or a lock or deadline ran out); nothing was written, retry shortly" {
		t.Errorf("answer.Of(busy) = %d %s %q", status, code, detail)
	}
	// A domain error the database also could not serve is still the database's 503.
	if status, code, _ := answer.Of(errors.Join(problem.Conflict, database.ErrBusy)); status != 503 || code != "unavailable" {
		t.Errorf("answer.Of(conflict+busy) = %d %s", status, code)
	}
	odd := errors.New("disk on fire")
	if status, code, detail := answer.Of(odd); status != 500 || code != "internal_error" || detail != "internal error; it has been logged" {
		t.Errorf("answer.Of(odd) = %d %s %q", status, code, detail)
	}
	if code, detail := answer.Code(odd); code != "internal_error" || detail != "disk on fire" {
		t.Errorf("answer.Code(odd) = %s %q", code, detail)
	}
}

// TestFailRetryAfter pins the headers fail adds: a rate limit says when to retry, and so does an
// unavailable database; not_ready, though a 503 too, does not.
func TestFailRetryAfter(t *testing.T) {
	gin.SetMode(gin.TestMode)
	for _, c := range []struct {
		err        error
		status     int
		retryAfter string
	}{
		{problem.Fail(ratelimit.ErrExceeded, "slow down"), 429, "60"},
		{database.ErrBusy, 503, "5"},
		{problem.Fail(ErrNotReady, "database unavailable"), 503, ""},
		{problem.NotFound, 404, ""},
		{errors.New("disk on fire"), 500, ""},
	} {
		w := httptest.NewRecorder()
		ctx, _ := gin.CreateTestContext(w)
		ctx.Request = httptest.NewRequest(http.MethodGet, "/", nil)
		fail(ctx, c.err)
		if w.Code != c.status || w.Header().Get("Retry-After") != c.retryAfter {
			t.Errorf("fail(%q) = %d Retry-After %q, want %d %q", c.err, w.Code, w.Header().Get("Retry-After"), c.status, c.retryAfter)
		}
	}
}
