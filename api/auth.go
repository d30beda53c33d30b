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
		if !s.admitAuth(c) {
			return
		}
		now := s.Now()
		k, err := s.ReadKeys.AuthenticateRead(c.Request.Context(), token, now)
		if errors.Is(err, apikeys.ErrInvalidAPIKey) {
			err = wrongKind(err, token, apikeys.ReadKeyPrefix)
		}
		if err != nil {
			s.authFailed(c, err)
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

// failedAuthsPerMinute is how many refused credentials one client address may send a minute, to each
// instance, before the instance refuses its requests unread. Every API checks it before a lookup, so
// a flood of made-up keys, each new one a database turn (the key cache remembers those it has seen),
// cannot queue other tenants' requests at the database.
const failedAuthsPerMinute = 60

// admitAuth answers 429 rate_limited, with Retry-After, to an address over failedAuthsPerMinute,
// before its credential is looked up, and reports whether the request may go on.
func (s *server) admitAuth(c *gin.Context) bool {
	if s.limiter.Exhausted(authFailures(c), failedAuthsPerMinute) {
		fail(c, problem.Fail(ratelimit.ErrExceeded, "too many refused credentials from this address; retry after 60 seconds"))
		return false
	}
	return true
}

// authFailed counts a refused credential against the client's address; a lookup that failed for
// another reason (the database unavailable) is not the client's.
func (s *server) authFailed(c *gin.Context, err error) {
	if errors.Is(err, problem.Unauthorized) {
		s.limiter.Allow(authFailures(c), failedAuthsPerMinute)
	}
}

// authFailures is the limiter's key of the client address's refused credentials.
func authFailures(c *gin.Context) string { return "auth-failures:" + c.ClientIP() }

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

// CacheKeys puts c in front of the read and integration key lookups of st, so that authenticating
// costs no database round trip; the process runs c.Listen, without which c is bypassed.
func CacheKeys(st *Services, c *apikeys.Cache) {
	st.ReadKeys = c.Reads(st.ReadKeys)
	st.Gate = cachedGate{IntegrationGate: st.Gate, keys: c.Integrations(st.Gate)}
}

// cachedGate is the Integration API's gate with its key lookup served by the cache.
type cachedGate struct {
	IntegrationGate
	keys apikeys.IntegrationKeyLookup
}

func (g cachedGate) AuthenticateIntegration(ctx context.Context, token string, now time.Time) (*models.IntegrationKey, error) {
	return g.keys.AuthenticateIntegration(ctx, token, now)
}
