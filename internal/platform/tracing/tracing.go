// Package tracing follows one request through wds with OpenTelemetry: the HTTP request, its database
// transaction, the workflow start, each activity attempt and the outbound POST to the receiver share
// one trace, and log lines written with the request's context carry its trace id. It is configured
// only by the standard OpenTelemetry variables: with OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) unset nothing is exported, no interceptor is installed and the
// HTTP middleware passes straight through.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/sirupsen/logrus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// Attribute keys wds sets on its spans, beside OpenTelemetry's semantic conventions.
const (
	AttrEventID    = attribute.Key("wds.event_id")
	AttrEndpointID = attribute.Key("wds.endpoint_id")
	AttrAttempt    = attribute.Key("wds.attempt")
	AttrDeliveryID = attribute.Key("wds.delivery_id")
	AttrOutcome    = attribute.Key("wds.outcome")
)

// enabled is set once a tracer provider is installed; until then every hook of this package is a
// no-op, so a process without an exporter pays nothing for tracing.
var enabled atomic.Bool

// Enabled reports whether traces are recorded.
func Enabled() bool { return enabled.Load() }

// Install makes tp the process's tracer provider, with W3C trace context and baggage as the
// propagators, and turns the hooks of this package on. Setup calls it with the OTLP exporter; tests
// call it with an in-process recorder and call restore when done, since all of it is process-wide.
func Install(tp trace.TracerProvider) (restore func()) {
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	enabled.Store(true)
	// Back to what an untraced process has: OpenTelemetry's global cannot be unset, so a provider
	// and a propagator that do nothing.
	return func() {
		enabled.Store(false)
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	}
}

// exportRequested reports whether the environment names an OTLP endpoint for traces, and tracing
// is not switched off with OTEL_SDK_DISABLED.
func exportRequested() bool {
	if os.Getenv("OTEL_SDK_DISABLED") == "true" {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the OTLP exporter the standard variables describe, naming the process service
// (OTEL_SERVICE_NAME overrides it), and adds the trace id to log's lines. Without an endpoint it
// does nothing. shutdown flushes the spans still buffered.
func Setup(ctx context.Context, service string, log *logrus.Logger) (shutdown func(context.Context) error, err error) {
	if !exportRequested() {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := exporter(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	// The sampler follows OTEL_TRACES_SAMPLER (default: sample what the parent sampled, else all).
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Install(tp)
	log.AddHook(LogHook{})
	return tp.Shutdown, nil
}

// exporter is the OTLP exporter of OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL:
// http/protobuf (the specification's default) or grpc. Each reads its endpoint, headers, timeout
// and TLS settings from the standard variables itself.
func exporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	name, protocol := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		name, protocol = "OTEL_EXPORTER_OTLP_PROTOCOL", os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("%s=%q: use http/protobuf or grpc", name, protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter (OTEL_EXPORTER_OTLP_*): %w", err)
	}
	return exp, nil
}

// TemporalInterceptors are the Temporal client interceptors that carry the trace from a workflow's
// start through the workflow to each activity attempt, in Temporal's own headers; none when
// tracing is off, so an untraced process adds nothing to each start and task.
func TemporalInterceptors() ([]interceptor.ClientInterceptor, error) {
	if !Enabled() {
		return nil, nil
	}
	i, err := opentelemetry.NewTracingInterceptor(opentelemetry.TracerOptions{
		// The process's propagators, so baggage set at the API reaches the activities too.
		TextMapPropagator: otel.GetTextMapPropagator(),
		// A workflow started before tracing was turned on carries no span to continue.
		AllowInvalidParentSpans: true,
	})
	if err != nil {
		return nil, fmt.Errorf("temporal tracing interceptor: %w", err)
	}
	return []interceptor.ClientInterceptor{i}, nil
}

// LogHook adds trace_id and span_id to every log line written with a context that carries a span
// (logger.WithContext(ctx)), so a line can be found from its trace and the other way round.
type LogHook struct{}

// Levels implements logrus.Hook.
func (LogHook) Levels() []logrus.Level { return logrus.AllLevels }

// Fire implements logrus.Hook.
func (LogHook) Fire(e *logrus.Entry) error {
	if e.Context == nil {
		return nil
	}
	if sc := trace.SpanContextFromContext(e.Context); sc.IsValid() {
		e.Data["trace_id"] = sc.TraceID().String()
		e.Data["span_id"] = sc.SpanID().String()
	}
	return nil
}
