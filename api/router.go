// Package api is the HTTP surface: Gin handlers and middleware for the Read, Integration and
// Operator APIs. Handlers parse, authenticate and render; the rules live in the domain services,
// which handlers reach through the small interfaces of Services (services.go), never through the database. The
// services start the webhook events they commit, so no handler does.
package api

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/platform/answer"
	"wds/internal/platform/config"
	"wds/internal/platform/metrics"
	"wds/internal/platform/ratelimit"
	"wds/internal/platform/secrets"
	"wds/internal/platform/tracing"
	"wds/internal/workspace"
)

// Deps is what the handlers need from the process.
type Deps struct {
	Services
	Log logrus.FieldLogger
	// TrustedProxies are CIDRs whose X-Forwarded-For is believed; empty means the TCP peer is the client.
	TrustedProxies []string
	// TraceTrustCallers continues every caller's traceparent; otherwise only a trusted proxy's
	// (tracing.Incoming).
	TraceTrustCallers bool
	// LastUsed batches last_used_at writes; nil writes nothing (tests of pure routing).
	LastUsed *apikeys.LastUsed
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Webhooks runs the endpoint and delivery operations; nil leaves the Operator API and the test
	// event unmounted (tests of the Read API alone).
	Webhooks WebhookService
	// Dispatches starts queued re-fires and test events at once; nil leaves them to the relay.
	Dispatches DispatchStarter
	// Events runs the support desk's event search; nil leaves the support desk's routes unmounted.
	Events EventSearch
	// Resends re-fires deliveries, resends events and sends test events; it is set with Webhooks
	// (the re-fire and the test event) and Events (the resends).
	Resends Resends
	// Recoveries runs the support desk's recoveries; nil leaves their routes unmounted.
	Recoveries Recoveries
	// RequestTimeout is the deadline on each request's context; 0 is config.RequestTimeout.
	RequestTimeout time.Duration
}

// server carries the dependencies and per-instance state of one router.
type server struct {
	Deps
	// limiter is the Read API's limiter, per instance as the specification allows; the Integration
	// API's is in the database so every instance shares it (IntegrationGate).
	limiter *ratelimit.Limiter
}

// NewRouter builds the whole HTTP API.
func NewRouter(d Deps) (*gin.Engine, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.RequestTimeout <= 0 {
		d.RequestTimeout = config.RequestTimeout
	}
	s := &server{Deps: d, limiter: ratelimit.New(d.Now)}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	// Gin trusts every proxy by default; believe X-Forwarded-For only from configured ones (an allowlist must not be fooled by a spoofed header).
	if err := r.SetTrustedProxies(d.TrustedProxies); err != nil {
		return nil, err
	}
	proxies, err := prefixes(d.TrustedProxies)
	if err != nil {
		return nil, err
	}
	r.ContextWithFallback = true
	// Outermost first: the id exists before anything answers, and a panic recovered inside the
	// log and metrics middleware is still logged and counted as the 500 it became. The deadline
	// comes last, so what follows it (every handler, and the console's) runs under it.
	r.Use(requestID, tracing.Middleware(tracing.Incoming{TrustedProxies: proxies, AnyCaller: d.TraceTrustCallers}), metrics.Middleware, s.requestLog, s.recover, s.deadline)
	r.NoRoute(NotFound)
	r.NoMethod(NotFound)
	r.HandleMethodNotAllowed = false
	// A path with a stray trailing slash is no path of the APIs: 404 in the error shape, not an
	// HTML redirect that no document describes.
	r.RedirectTrailingSlash = false
	s.registerRead(r)
	r.GET("/v1/ready", s.ready)
	if d.Webhooks != nil {
		s.registerOperator(r)
		s.registerWebhookTest(r)
	}
	if d.Events != nil {
		s.registerSupport(r)
	}
	s.registerIntegration(r)
	s.registerOperatorKeys(r)
	s.registerOperatorUsers(r)
	s.registerOperatorAppOrders(r)
	s.registerOperatorFulfillment(r)
	s.registerVendors(r)
	return r, nil
}

// deadline puts the request deadline on the request's context, which every query and call is given
// (c.Request.Context()): database work cannot outlive it. A statement, lock wait or queued turn
// still running when it passes is cancelled, its transaction rolls back, and the request answers 503
// unavailable (errors.go), which the client may retry. The server's write timeout outlasts it
// (config/timeouts.go), so that answer still reaches the client.
func (s *server) deadline(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.RequestTimeout)
	defer cancel()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}

func (s *server) recover(c *gin.Context) {
	defer func() {
		if p := recover(); p != nil {
			s.Log.WithFields(logrus.Fields{"panic": p, "request_id": c.GetString(ctxRequestID)}).Error("handler panicked")
			c.AbortWithStatusJSON(http.StatusInternalServerError, answer.Body{Error: "internal_error", Detail: "internal error; it has been logged"})
		}
	}()
	c.Next()
}

// prefixes are the trusted proxies' CIDR ranges, for the checks Gin does not make itself.
func prefixes(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: %w", c, err)
		}
		out[i] = p.Masked()
	}
	return out, nil
}

// HeaderRequestID carries the request id: accepted from the caller (a proxy or client tracing its
// own calls), generated otherwise, and always echoed so a support ticket can quote it.
const HeaderRequestID = "X-Request-Id"

// maxRequestIDLen bounds an accepted id; longer or odd ones are replaced, never truncated, so what
// is logged is either the caller's exact id or ours.
const maxRequestIDLen = 128

const ctxRequestID = "wds.request_id"

// requestID sets the request id before anything can answer, so even a refused request echoes it.
func requestID(c *gin.Context) {
	id := c.GetHeader(HeaderRequestID)
	if !validRequestID(id) {
		id = uuid.NewString()
	}
	c.Set(ctxRequestID, id)
	c.Header(HeaderRequestID, id)
	c.Next()
}

// validRequestID accepts 1..128 characters of letters, digits and . _ : - (UUIDs, ULIDs, trace ids),
// which keeps log lines free of control characters and injected fields.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == ':' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// requestLog writes one structured line per request: who called (key id, org or operator user, never
// a key or token), what (route pattern and path without the query, secrets cut out), the outcome
// and its duration.
// Server errors are logged at error level with their cause; everything else at info.
func (s *server) requestLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	fields := logrus.Fields{
		"request_id": c.GetString(ctxRequestID),
		"method":     c.Request.Method, "route": c.FullPath(), "path": redactSecrets(c.Request.URL.Path),
		"status": c.Writer.Status(), "duration_ms": float64(time.Since(start).Microseconds()) / 1000,
		"client_ip": c.ClientIP(),
	}
	for field, key := range map[string]string{"key_id": ctxKeyID, "org_id": ctxOrgID, "operator_id": ctxOperator} {
		if v, ok := c.Get(key); ok {
			fields[field] = v
		}
	}
	entry := s.Log.WithFields(fields).WithContext(c.Request.Context()) // the context: its trace id (tracing.LogHook)
	if len(c.Errors) > 0 {
		entry = entry.WithError(c.Errors.Last().Err)
	}
	if c.Writer.Status() >= http.StatusInternalServerError {
		entry.Error("request failed")
		return
	}
	entry.Info("request")
}

// secretPrefixes begin every secret the service hands out.
var secretPrefixes = []string{apikeys.ReadKeyPrefix, apikeys.IntegrationKeyPrefix, workspace.OperatorTokenPrefix,
	catalog.ClaimTokenPrefix, secrets.SigningSecretPrefix}

// redacted replaces what follows a secret's prefix in a logged path.
const redacted = "[redacted]"

// redactSecrets cuts every secret out of a request path, keeping its prefix so the line still says
// what kind of thing was pasted there. Callers put secrets in paths by mistake (a key where an id
// goes, a claim token in a link a supplier clicks, a key as an external id) and the path is logged
// for every request, 404s included. Paths without an underscore, nearly all of them, cost one scan.
func redactSecrets(path string) string {
	if !strings.Contains(path, "_") {
		return path
	}
	for _, prefix := range secretPrefixes {
		for from := 0; ; {
			i := strings.Index(path[from:], prefix)
			if i < 0 {
				break
			}
			start := from + i + len(prefix)
			end := start
			for end < len(path) && (keyChar(path[end]) || prefix == secrets.SigningSecretPrefix && signingChar(path[end])) {
				end++
			}
			if end > start {
				path = path[:start] + redacted + path[end:]
			}
			from = start
		}
	}
	return path
}

// keyChar is a character of unpadded base64url, the alphabet of every secret after its prefix.
func keyChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}

// signingChar is what standard padded base64 adds to keyChar: signing secrets are made in that form
// (docs/webhooks.md#standard-webhooks), so a '/' in one cuts no redaction short (it redacts the rest of the path too).
func signingChar(b byte) bool { return b == '+' || b == '/' || b == '=' }
