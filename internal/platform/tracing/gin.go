package tracing

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"wds/internal/platform/metrics"
)

// Middleware opens the server span of each HTTP request, continuing the caller's trace when it
// sends a traceparent header, and hands the span's context to everything after it. The span is
// named by the route pattern, never the path, which can carry ids and pasted secrets.
func Middleware(c *gin.Context) {
	if !Enabled() {
		c.Next()
		return
	}
	route := c.FullPath()
	if route == "" {
		route = metrics.RouteUnmatched
	}
	ctx := otel.GetTextMapPropagator().Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
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
