package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"wds/internal/platform/tracing"
)

// untraced undoes, at the test's end, whatever a test installed process-wide.
func untraced(t *testing.T) {
	t.Cleanup(tracing.Install(noop.NewTracerProvider()))
}

func TestWithoutAnEndpointNothingIsInstalled(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	log := logrus.New()
	shutdown, err := tracing.Setup(context.Background(), "wds-test", log)
	if err != nil {
		t.Fatal(err)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tracing.Enabled() {
		t.Error("tracing is on without an exporter")
	}
	if i, err := tracing.TemporalInterceptors(); err != nil || i != nil {
		t.Errorf("interceptors %v, %v: want none, so Temporal calls pay nothing", i, err)
	}
	if len(log.Hooks) != 0 {
		t.Errorf("log hooks %v added without tracing", log.Hooks)
	}
}

func TestAnUnknownProtocolIsRefusedNamingTheVariable(t *testing.T) {
	untraced(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	_, err := tracing.Setup(context.Background(), "wds-test", logrus.New())
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Fatalf("err = %v, want one naming OTEL_EXPORTER_OTLP_PROTOCOL", err)
	}
}

// TestSpansReachTheOTLPEndpoint sends a span to a real OTLP/HTTP receiver named by the standard
// variables, with the service name the process gave unless OTEL_SERVICE_NAME says otherwise.
func TestSpansReachTheOTLPEndpoint(t *testing.T) {
	untraced(t)
	var got atomic.Int32
	var body atomic.Value
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" {
			var b bytes.Buffer
			_, _ = b.ReadFrom(r.Body)
			body.Store(b.String())
			got.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "")
	shutdown, err := tracing.Setup(context.Background(), "wds-test-service", logrus.New())
	if err != nil {
		t.Fatal(err)
	}
	if !tracing.Enabled() {
		t.Fatal("tracing is off with an endpoint set")
	}
	_, span := otel.Tracer("test").Start(context.Background(), "exported span")
	span.End()
	if err := shutdown(context.Background()); err != nil { // flushes the batch
		t.Fatal(err)
	}
	if got.Load() == 0 {
		t.Fatal("the collector received no trace export")
	}
	b, _ := body.Load().(string)
	for _, want := range []string{"exported span", "wds-test-service"} {
		if !strings.Contains(b, want) {
			t.Errorf("the export does not carry %q", want)
		}
	}
}

// httptest's requests come from 192.0.2.1, which this proxy list trusts.
var fromProxy = tracing.Incoming{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}}

func router() *gin.Engine { return routerTrusting(fromProxy) }

func routerTrusting(in tracing.Incoming) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(tracing.Middleware(in))
	r.GET("/v1/orders/:id", func(c *gin.Context) {
		if !trace.SpanContextFromContext(c.Request.Context()).IsValid() {
			c.Status(http.StatusTeapot) // the handler did not get the span
			return
		}
		if baggage.FromContext(c.Request.Context()).Len() > 0 {
			c.Status(http.StatusConflict) // a caller's baggage reached the handler
			return
		}
		c.Status(http.StatusOK)
	})
	r.GET("/boom", func(c *gin.Context) { c.Status(http.StatusServiceUnavailable) })
	return r
}

func TestMiddlewareSpansEachRequestByRouteAndContinuesTheCallersTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req := httptest.NewRequest(http.MethodGet, "/v1/orders/pck_live_secret", nil)
	req.Header.Set("traceparent", parent)
	w := httptest.NewRecorder()
	router().ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: the handler did not run under the request's span", w.Code)
	}
	router().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/boom", nil))
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	s := spans[0]
	if s.Name() != "GET /v1/orders/:id" || s.SpanKind() != trace.SpanKindServer {
		t.Errorf("span %q kind %v, want the route pattern as a server span", s.Name(), s.SpanKind())
	}
	if s.SpanContext().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("span %s under %s: the caller's traceparent was not continued", s.SpanContext().TraceID(), s.Parent().SpanID())
	}
	for _, kv := range s.Attributes() {
		if strings.Contains(kv.Value.Emit(), "pck_live_") {
			t.Errorf("attribute %s carries the path's secret", kv.Key)
		}
	}
	if spans[1].Status().Code != codes.Error {
		t.Errorf("a 503 span has status %v, want error", spans[1].Status())
	}
}

// A caller's traceparent decides whether wds samples and which trace its spans join: only a trusted
// proxy, or any caller when WDS_TRACE_TRUST_CALLERS says so, may set it. Baggage is taken from no
// one, as it would ride into the Temporal history of every workflow the request starts.
func TestOnlyATrustedPeerContinuesItsTraceAndNoCallerSetsBaggage(t *testing.T) {
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	cases := []struct {
		name      string
		in        tracing.Incoming
		continued bool
	}{
		{"a caller the proxies do not cover", tracing.Incoming{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, false},
		{"no trusted proxies at all", tracing.Incoming{}, false},
		{"a trusted proxy", fromProxy, true},
		{"any caller, by setting", tracing.Incoming{AnyCaller: true}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
			req := httptest.NewRequest(http.MethodGet, "/v1/orders/1", nil)
			req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
			req.Header.Set("baggage", "tenant=acme,padding="+strings.Repeat("x", 4000))
			w := httptest.NewRecorder()
			routerTrusting(tc.in).ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d (409: the caller's baggage reached the handler)", w.Code)
			}
			spans := rec.Ended()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			if got := spans[0].SpanContext().TraceID().String() == traceID; got != tc.continued {
				t.Errorf("the caller's trace continued: %v, want %v", got, tc.continued)
			}
		})
	}
}

func TestMiddlewarePassesThroughWhenTracingIsOff(t *testing.T) {
	untraced(t)
	restore := tracing.Install(noop.NewTracerProvider())
	restore() // installed, then undone: as a process without an exporter
	w := httptest.NewRecorder()
	router().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/orders/1", nil))
	if w.Code != http.StatusTeapot {
		t.Errorf("status %d: a span reached the handler with tracing off", w.Code)
	}
}

func TestLogLinesCarryTheTraceOfTheirContext(t *testing.T) {
	var buf bytes.Buffer
	log := logrus.New()
	log.SetOutput(&buf)
	log.SetFormatter(&logrus.JSONFormatter{})
	log.AddHook(tracing.LogHook{})
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5}, TraceFlags: trace.FlagsSampled})
	log.WithContext(trace.ContextWithSpanContext(context.Background(), sc)).Info("traced")
	log.WithContext(context.Background()).Info("untraced")
	log.Info("no context")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var first map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &first)
	if first["trace_id"] != sc.TraceID().String() || first["span_id"] != sc.SpanID().String() {
		t.Errorf("traced line %v, want trace_id %s and span_id %s", first, sc.TraceID(), sc.SpanID())
	}
	for _, l := range lines[1:] {
		if strings.Contains(l, "trace_id") {
			t.Errorf("a line without a span carries a trace id: %s", l)
		}
	}
}
