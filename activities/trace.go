package activities

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"wds/internal/platform/tracing"
	"wds/models"
	"wds/workflows/contract"
)

// tracePost runs post, the outbound POST of attempt in to d's endpoint, inside a client span that
// names the event, the endpoint and the attempt, and records what the receiver answered. The span
// is a child of the activity attempt's (Temporal's tracing interceptor carries the trace there from
// the request that wrote the event).
func tracePost(ctx context.Context, d *models.Delivery, in contract.AttemptInput, post func(context.Context)) {
	ctx, span := otel.Tracer("wds/activities").Start(ctx, "webhook POST", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		tracing.AttrEventID.String(in.EventID.String()), tracing.AttrEndpointID.String(in.EndpointID.String()),
		tracing.AttrAttempt.Int(in.Attempt), tracing.AttrDeliveryID.String(d.ID.String()),
		attribute.String("http.request.method", "POST")))
	defer span.End()
	post(ctx)
	span.SetAttributes(tracing.AttrOutcome.String(string(d.Status)))
	if d.ResponseStatus != nil {
		span.SetAttributes(attribute.Int("http.response.status_code", *d.ResponseStatus))
	}
	if d.Status != models.StatusSucceeded {
		span.SetStatus(codes.Error, d.Error)
	}
}
