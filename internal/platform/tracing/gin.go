package tracing

import (
	"net/http"
	"net/netip"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"wds/internal/platform/metrics"
)

// Incoming says whose trace context a request may continue. A caller's traceparent decides whether
// wds samples the request and which trace its spans join, so it is taken only from a trusted proxy
// (the TCP peer is in TrustedProxies, WDS_TRUSTED_PROXIES) or, when AnyCaller is set
// (WDS_TRACE_TRUST_CALLERS), from every caller. Baggage is taken from no caller: whatever the
// request's context holds rides into the Temporal history of every workflow the request starts.
type Incoming struct {
	TrustedProxies []netip.Prefix
	AnyCaller      bool
}

// trusts reports whether the request's trace context is to be continued.
func (in Incoming) trusts(c *gin.Context) bool {
	if in.AnyCaller {
		return true
	}
	peer, err := netip.ParseAddr(c.RemoteIP())
	if err != nil {
		return false
	}
	peer = peer.Unmap()
	for _, p := range in.TrustedProxies {
		if p.Contains(peer) {
			return true
		}
	}
	return false
}

// Middleware opens the server span of each HTTP request, continuing the caller's trace when it
// sends a traceparent header and in trusts it, and hands the span's context to everything after it.
// The span is named by the route pattern, never the path, which can carry ids and pasted secrets.
func Middleware(in Incoming) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !Enabled() {
			c.Next()
			return
		}
		serve(c, in.trusts(c))
	}
}

// serve runs the rest of the chain inside the request's server span.
func serve(c *gin.Context, continueCaller bool) {
	route := c.FullPath()
	if route == "" {
		route = metrics.RouteUnmatched
	}
	ctx := c.Request.Context()
	if continueCaller {
		// Trace context only: never the caller's baggage.
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(c.Request.Header))
	}
	ctx, span := otel.Tracer("wds/api").Start(ctx, c.Request.Method+" "+route,
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", c.Request.Method), attribute.String("http.route", route)))
	defer span.End()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
	status := c.Writer.Status()
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= http.StatusInternalServerError {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}
