package api

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/ingest"
)

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
