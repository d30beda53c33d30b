package api

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"wds/internal/apikeys"
	"wds/internal/platform/problem"
	"wds/internal/platform/ratelimit"
	"wds/internal/workspace"
	"wds/models"
)

// ReadKeyAuth finds the live read key a bearer token names (apikeys): unknown, revoked and expired
// keys are all invalid_api_key.
type ReadKeyAuth interface {
	AuthenticateRead(ctx context.Context, token string, now time.Time) (*models.ReadKey, error)
}

// Context keys set by the authentication middleware.
const (
	ctxKeyID   = "wds.key_id"
	ctxOrgID   = "wds.org_id"
	ctxReadKey = "wds.read_key"
)

// bearer extracts the token of `Authorization: Bearer <token>`; anything else is missing_authorization.
func bearer(c *gin.Context) (string, error) {
	h := c.GetHeader("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", ErrMissingAuthorization
	}
	return token, nil
}

// readAuth authenticates a pck_live_ key, applies its per-instance rate limit and checks scope.
func (s *server) readAuth(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		token, err := bearer(c)
		if err != nil {
			fail(c, err)
			return
		}
		now := s.Now()
		k, err := s.ReadKeys.AuthenticateRead(c.Request.Context(), token, now)
		if errors.Is(err, apikeys.ErrInvalidAPIKey) {
			err = wrongKind(err, token, apikeys.ReadKeyPrefix)
		}
		if err != nil {
			fail(c, err)
			return
		}
		// last_used_at advances on every successful authentication, even if scope or rate refuse next.
		if s.LastUsed != nil {
			s.LastUsed.Touch(apikeys.ReadKeysTable, k.ID, now)
		}
		c.Set(ctxKeyID, k.ID)
		c.Set(ctxOrgID, k.OrgID)
		c.Set(ctxReadKey, k)
		if !s.limiter.Allow("read:"+k.ID.String(), readRateLimit) {
			fail(c, ratelimit.ErrExceeded)
			return
		}
		if scope == models.ScopeReadWrite && k.Scope != models.ScopeReadWrite {
			fail(c, problem.Fail(apikeys.ErrInsufficientScope, "this endpoint needs a read_write key"))
			return
		}
		c.Next()
	}
}

// readRateLimit is the Read API's per-key, per-instance budget per minute.
const readRateLimit = 600

// credentials are the kinds of bearer credential wds issues, told apart by their prefixes.
var credentials = []struct{ prefix, name string }{
	{apikeys.ReadKeyPrefix, "a read key"},
	{apikeys.IntegrationKeyPrefix, "an integration key"},
	{workspace.OperatorTokenPrefix, "an operator token"},
}

// credentialName is "a read key (pck_live_)" for prefix, or "" for a prefix that is not ours.
func credentialName(prefix string) string {
	for _, k := range credentials {
		if k.prefix == prefix {
			return k.name + " (" + k.prefix + ")"
		}
	}
	return ""
}

// wrongKind gives a refused credential of another kind than the one the API takes (want, a
// prefix) a detail that says which kind the API takes; any other failure is err as it was. Only the
// token's own prefix is read, so the answer tells a caller nothing it did not send.
func wrongKind(err error, token, want string) error {
	for _, k := range credentials {
		if k.prefix != want && strings.HasPrefix(token, k.prefix) {
			return problem.Fail(err, "this is %s; this API takes %s", credentialName(k.prefix), credentialName(want))
		}
	}
	return err
}
