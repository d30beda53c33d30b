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
	"github.com/sirupsen/logrus"

	"wds/internal/apikeys"
	"wds/internal/platform/answer"
	"wds/internal/platform/config"
	"wds/internal/platform/metrics"
	"wds/internal/platform/ratelimit"
	"wds/internal/platform/tracing"
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
	// Support runs the support desk (events, resends); nil leaves its routes unmounted.
	Support SupportDesk
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
	if d.Support != nil {
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
