package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/api/openapi"
	"wds/api/signing"
	"wds/internal/apikeys"
	"wds/internal/ingest"
	"wds/internal/ingest/nativestore"
	"wds/internal/order"
	"wds/internal/platform/answer"
	"wds/internal/platform/problem"
	"wds/internal/platform/ratelimit"
	"wds/models"
)

// IntegrationGate is what the Integration API's middleware asks before a handler runs: whose key the
// token is, and the key's signing secret (apikeys).
type IntegrationGate interface {
	// AuthenticateIntegration tells revoked and expired keys so (apikeys.ErrKeyRevoked, ErrKeyExpired).
	AuthenticateIntegration(ctx context.Context, token string, now time.Time) (*models.IntegrationKey, error)
	SigningSecret(k *models.IntegrationKey) ([]byte, error)
}

// RequestLimit is the per-key rate limit shared by every instance (ratelimit.Leased).
type RequestLimit interface {
	Allow(ctx context.Context, keyID uuid.UUID, limit int, now time.Time) (bool, error)
}

// IngestStore is the Integration API's writes and its one read (ingest.Service). Each write is one
// transaction, and starts the events it committed once it has.
type IngestStore interface {
	CreateOrder(ctx context.Context, key *models.IntegrationKey, in ingest.Order) (*ingest.OrderResult, error)
	RecordPayment(ctx context.Context, key *models.IntegrationKey, orderID uuid.UUID, in ingest.Payment) (*ingest.PaymentResult, error)
	CancelOrder(ctx context.Context, key *models.IntegrationKey, orderID uuid.UUID) (*ingest.CancelResult, error)
	RefundPayment(ctx context.Context, key *models.IntegrationKey, paymentID uuid.UUID, in ingest.Refund) (*ingest.RefundResult, error)
	UpsertClient(ctx context.Context, key *models.IntegrationKey, in ingest.Client) (*ingest.ClientResult, error)
	ApplyStoreOrder(ctx context.Context, key *models.IntegrationKey, in ingest.StoreOrder) (*ingest.StoreResult, error)
	OrderByExternal(ctx context.Context, key *models.IntegrationKey, externalID string) (*order.Order, error)
}

// Context keys of the Integration API middleware.
const (
	ctxIntKey = "wds.integration_key"
	ctxBody   = "wds.body"
)

// maxBody is the cap on every inbound body (docs/integration-api.md).
const maxBody = 1 << 20

// cappedBody reads a request's whole body under the cap: a larger one is payload_too_large, one that
// cannot be read (the client went away mid-body) invalid_json.
func cappedBody(c *gin.Context) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, problem.Fail(answer.ErrPayloadTooLarge, "the body exceeds %d bytes (1 MiB)", maxBody)
	}
	if err != nil {
		return nil, problem.Fail(answer.ErrInvalidJSON, "the body could not be read")
	}
	return body, nil
}

// Signature headers of the two payload formats.
const (
	headerPCSignature    = "PC-Signature"
	headerStoreSignature = "X-Store-Webhook-Signature"
	headerIdempotencyKey = "Idempotency-Key"
)

// registerIntegration mounts /integrations/v1. Every authenticated route runs, in order: key
// authentication, the route's payload format (it depends on the key alone, so a nativestore key on
// /orders hears wrong_format whatever it signed), IP allowlist, the key's rate limit, the capped body
// read, signature verification over the raw bytes, scope, the Idempotency-Key layer, the operation.
func (s *server) registerIntegration(r *gin.Engine) {
	g := r.Group("/integrations/v1")
	g.GET("/health", health)
	g.GET("/openapi.json", serveDoc(openapi.IntegrationJSON, "application/json"))

	a := g.Group("", s.intAuth)
	guarded := func(h ...gin.HandlerFunc) []gin.HandlerFunc {
		return append([]gin.HandlerFunc{s.intAllowIP, s.intRateLimit, readBody, s.intVerifySignature}, h...)
	}
	generic := func(scope string, h gin.HandlerFunc) []gin.HandlerFunc {
		return append([]gin.HandlerFunc{acceptFormat(models.FormatGeneric)}, guarded(requireScope(scope), s.idempotent, h)...)
	}
	a.POST("/orders", generic(models.ScopeOrdersWrite, s.createOrder)...)
	a.POST("/orders/:id/payments", generic(models.ScopePaymentsWrite, s.recordPayment)...)
	a.POST("/orders/:id/cancel", generic(models.ScopeOrdersCancel, s.cancelOrder)...)
	a.POST("/payments/:id/refund", generic(models.ScopePaymentsRefund, s.refundPayment)...)
	a.POST("/clients", generic(models.ScopeClientsWrite, s.upsertClient)...)
	a.POST("/webhook/nativestore", append([]gin.HandlerFunc{acceptFormat(models.FormatNativestore)}, guarded(s.idempotent, s.receiveNativestore)...)...)
	// A catch-all, so external ids holding "/" (INV/2026/7) are found; the leading "/" is trimmed.
	a.GET("/orders/by-external/*external_id", guarded(s.orderByExternal)...)
}

// intKey is the authenticated integration key of the request.
func intKey(c *gin.Context) *models.IntegrationKey {
	return c.MustGet(ctxIntKey).(*models.IntegrationKey)
}

// intAuth authenticates a pck_int_ key; revoked and expired keys are told so.
func (s *server) intAuth(c *gin.Context) {
	token, err := bearer(c)
	if err != nil {
		fail(c, err)
		return
	}
	if !s.admitAuth(c) {
		return
	}
	now := s.Now()
	k, err := s.Gate.AuthenticateIntegration(c.Request.Context(), token, now)
	if errors.Is(err, apikeys.ErrInvalidAPIKey) {
		err = wrongKind(err, token, apikeys.IntegrationKeyPrefix)
	}
	if err != nil {
		s.authFailed(c, err)
		fail(c, err)
		return
	}
	c.Set(ctxKeyID, k.ID)
	c.Set(ctxOrgID, k.OrgID)
	c.Set(ctxIntKey, k)
	if s.LastUsed != nil {
		s.LastUsed.Touch(apikeys.IntegrationKeysTable, k.ID, now)
	}
	c.Next()
}

// intAllowIP enforces the key's allowlist against the client address: the TCP peer, or the
// X-Forwarded-For hop a configured trusted proxy reports (gin's ClientIP with our trusted proxies).
func (s *server) intAllowIP(c *gin.Context) {
	if !intKey(c).AllowsIP(c.ClientIP()) {
		fail(c, problem.Fail(apikeys.ErrIPNotAllowed, "source address %s is not in the key's allowlist", c.ClientIP()))
		return
	}
	c.Next()
}

// intRateLimit applies the key's own per-minute limit over a sliding window shared by every
// instance. It fails closed: when the limiter cannot count the request (the database is
// unreachable, too busy, a lock or the request's deadline ran out), the request is refused with 503
// unavailable and Retry-After, like any request the database cannot serve, and is not counted. An
// outage of the limiter is then never a window without a limit, and the writes behind it need the
// database anyway. A client that hung up while it waited is let go without an answer.
func (s *server) intRateLimit(c *gin.Context) {
	k := intKey(c)
	ok, err := s.Limits.Allow(c.Request.Context(), k.ID, k.RateLimit, s.Now())
	switch {
	case err != nil && errors.Is(c.Request.Context().Err(), context.Canceled):
		c.AbortWithStatus(statusClientClosed)
		return
	case err != nil:
		fail(c, err)
		return
	case !ok:
		fail(c, problem.Fail(ratelimit.ErrExceeded, "this key allows %d requests per minute; retry after 60 seconds", k.RateLimit))
		return
	}
	c.Next()
}

// statusClientClosed is what the request log and metrics record for a request whose client hung up
// before it was answered (nginx's 499); the client never sees it.
const statusClientClosed = 499

// readBody reads the whole body once, capped at 1 MiB, for the signature and the handlers.
func readBody(c *gin.Context) {
	body, err := cappedBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	c.Set(ctxBody, body)
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	c.Next()
}

func body(c *gin.Context) []byte { return c.MustGet(ctxBody).([]byte) }

// intVerifySignature checks the request signature over the raw bytes when the key requires one:
// PC-Signature for generic keys, X-Store-Webhook-Signature for nativestore keys (which always do).
func (s *server) intVerifySignature(c *gin.Context) {
	k := intKey(c)
	if !k.RequireSignature && k.PayloadFormat != models.FormatNativestore {
		c.Next()
		return
	}
	secret, err := s.Gate.SigningSecret(k)
	if err != nil {
		fail(c, err)
		return
	}
	if k.PayloadFormat == models.FormatNativestore {
		err = signing.VerifyNativestore(secret, c.GetHeader(headerStoreSignature), body(c))
	} else {
		err = signing.VerifyPC(secret, c.GetHeader(headerPCSignature), body(c), s.Now())
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.Next()
}

// acceptFormat refuses keys of another payload_format (nativestore keys post only to the receiver).
func acceptFormat(format string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if k := intKey(c); k.PayloadFormat != format {
			fail(c, problem.Fail(ErrWrongFormat, "this endpoint accepts %s keys; this key's payload_format is %s", format, k.PayloadFormat))
			return
		}
		c.Next()
	}
}

// requireScope refuses keys without the endpoint's scope.
func requireScope(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !intKey(c).HasScope(scope) {
			fail(c, problem.Fail(apikeys.ErrInsufficientScope, "this endpoint needs the %s scope", scope))
			return
		}
		c.Next()
	}
}

// pathID parses a path UUID; one that is not a UUID names no row: 404 like another store's row.
func pathID(c *gin.Context, what string) (uuid.UUID, bool) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "%s %q not found", what, c.Param("id")))
		return uuid.Nil, false
	}
	return id, true
}

// created is 201 for a new row and 200 for a duplicate or an update (docs/integration-api.md).
func created(isNew bool) int {
	if isNew {
		return http.StatusCreated
	}
	return http.StatusOK
}

func (s *server) createOrder(c *gin.Context) {
	in, err := ingest.DecodeOrder(body(c))
	if err != nil {
		fail(c, err)
		return
	}
	res, err := s.Ingest.CreateOrder(c.Request.Context(), intKey(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(created(!res.Duplicate), res)
}

func (s *server) recordPayment(c *gin.Context) {
	id, ok := pathID(c, "order")
	if !ok {
		return
	}
	var in ingest.Payment
	if err := ingest.Decode(body(c), &in); err != nil {
		fail(c, err)
		return
	}
	res, err := s.Ingest.RecordPayment(c.Request.Context(), intKey(c), id, in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(created(!res.Duplicate), res)
}

func (s *server) cancelOrder(c *gin.Context) {
	id, ok := pathID(c, "order")
	if !ok {
		return
	}
	res, err := s.Ingest.CancelOrder(c.Request.Context(), intKey(c), id)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

func (s *server) refundPayment(c *gin.Context) {
	id, ok := pathID(c, "payment")
	if !ok {
		return
	}
	var in ingest.Refund
	if err := ingest.DecodeOptional(body(c), &in); err != nil {
		fail(c, err)
		return
	}
	res, err := s.Ingest.RefundPayment(c.Request.Context(), intKey(c), id, in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

func (s *server) upsertClient(c *gin.Context) {
	var in ingest.Client
	if err := ingest.Decode(body(c), &in); err != nil {
		fail(c, err)
		return
	}
	res, err := s.Ingest.UpsertClient(c.Request.Context(), intKey(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(created(res.Created), res)
}

// receiveNativestore applies the platform's order webhook. A ping that is not an order is acknowledged
// (its signature was verified already) so the platform keeps the webhook active.
func (s *server) receiveNativestore(c *gin.Context) {
	in, err := nativestore.Parse(body(c))
	if errors.Is(err, nativestore.ErrNotAnOrder) {
		c.JSON(http.StatusOK, gin.H{"ok": true, "ignored": true})
		return
	}
	if err != nil {
		fail(c, err)
		return
	}
	res, err := s.Ingest.ApplyStoreOrder(c.Request.Context(), intKey(c), *in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(created(res.Created), res)
}

func (s *server) orderByExternal(c *gin.Context) {
	o, err := s.Ingest.OrderByExternal(c.Request.Context(), intKey(c), strings.TrimPrefix(c.Param("external_id"), "/"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, o)
}

// IdempotencyStore claims an Idempotency-Key for a request (ingest): the claim the request settles
// when it has answered, or the stored answer to replay.
type IdempotencyStore interface {
	ClaimIdempotency(ctx context.Context, keyID uuid.UUID, key string, request []byte, now func() time.Time) (*ingest.Claim, *ingest.Replay, error)
}

// idempotent is the Idempotency-Key layer (docs/integration-api.md): the first request with a key executes
// and its answer is stored; for 24 hours the same key and body replay it, a different body is a
// conflict, and a concurrent request waits for the first instead of executing.
func (s *server) idempotent(c *gin.Context) {
	values := c.Request.Header.Values(headerIdempotencyKey)
	if len(values) == 0 {
		c.Next()
		return
	}
	key := values[0]
	if err := ingest.CheckIdempotencyKey(key); err != nil {
		fail(c, err)
		return
	}
	claim, replay, err := s.Idempotency.ClaimIdempotency(c.Request.Context(), intKey(c).ID, key,
		ingest.RequestIdentity(c.Request.Method, c.Request.URL.Path, body(c)), s.Now)
	if err != nil {
		fail(c, err)
		return
	}
	if replay != nil {
		c.Header("Idempotent-Replayed", "true")
		c.Data(replay.Status, "application/json; charset=utf-8", replay.Body)
		c.Abort()
		return
	}
	// Settling must happen even if the client has gone away: an unsettled claim blocks its key.
	ctx := context.WithoutCancel(c.Request.Context())
	rec := &recorder{ResponseWriter: c.Writer}
	c.Writer = rec
	finished := false
	defer func() {
		if !finished { // the handler panicked: let the next request with this key execute
			_ = claim.Release(ctx)
		}
	}()
	c.Next()
	finished = true
	if err := settle(ctx, claim, rec); err != nil {
		s.Log.WithError(err).WithField("key_id", intKey(c).ID).Error("idempotency entry not settled")
	}
}

// settle stores the answer, unless the request ended before executing (invalid JSON, auth, scope,
// size and rate failures) or its transaction rolled back for the infrastructure (503: the database
// was unreachable, the client went away, a deadline passed), which a retry with the same key must be
// free to redo. A 500 from a defect is kept, as Stripe keeps it.
func settle(ctx context.Context, claim *ingest.Claim, rec *recorder) error {
	switch rec.Status() {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden,
		http.StatusRequestEntityTooLarge, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return claim.Release(ctx)
	}
	return claim.Finish(ctx, rec.Status(), rec.body.Bytes())
}

// recorder keeps a copy of the response body for the idempotency cache.
type recorder struct {
	gin.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) WriteString(s string) (int, error) {
	r.body.WriteString(s)
	return r.ResponseWriter.WriteString(s)
}
