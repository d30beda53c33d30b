package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"

	"wds/internal/dev/temporaldev"
	"wds/internal/dispatch"
	"wds/internal/platform/temporalclient"
	"wds/internal/platform/tracing"
	"wds/workflows/contract"
)

// TestOneTraceFollowsAnOrderToTheReceiver records every span in process on the real Temporal dev
// server and checks that one trace goes from the Integration API's request through its transaction,
// the workflow start (Temporal's tracing interceptor), each activity attempt and each outbound
// POST, which names the event, the endpoint and the attempt; and that the request's log line
// carries the trace id.
func TestOneTraceFollowsAnOrderToTheReceiver(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	restore := tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(restore)
	srv := startTemporal(t, temporaldev.Options{})
	interceptors, err := tracing.TemporalInterceptors()
	if err != nil || len(interceptors) == 0 {
		t.Fatalf("interceptors %v, %v: want Temporal's tracing interceptor once tracing is on", interceptors, err)
	}
	tc, err := client.Dial(client.Options{HostPort: srv.Address, Logger: temporalclient.QuietLogger(), Interceptors: interceptors})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	h := newHarness(t, tc)
	// Locked: the worker's goroutines may still log while the test reads.
	logs := &lockedBuffer{}
	h.log.SetOutput(logs)
	h.log.SetFormatter(&logrus.JSONFormatter{})
	h.log.AddHook(tracing.LogHook{})
	// The relay keeps production's grace: with none it may start the event before the request's own
	// start does, and the workflow then runs in the relay's trace.
	h.starter.Grace = dispatch.RelayGrace
	h.startWorker()
	rc := newReceiver(t, failFirst(1)) // attempt 1 fails, attempt 2 (one second later) succeeds
	ep := h.endpoint(rc, 5, "order.created")

	if status, out := h.order("traced-1"); status != http.StatusCreated {
		t.Fatalf("create order: %d %v", status, out)
	}
	created := h.events("order.created")
	if len(created) != 1 {
		t.Fatalf("%d order.created events", len(created))
	}
	eventID := created[0].ID.String()
	posts := func() []sdktrace.ReadOnlySpan { return named(rec.Ended(), "webhook POST") }
	// A span is recorded when it ends: the workflow's when the chain completes, after the last POST.
	waitFor(t, 20*time.Second, "both attempts and the workflow to end", func() bool {
		ended := rec.Ended()
		return len(posts()) == 2 && len(named(ended, "RunActivity:"+contract.ActivityDeliver)) == 2 &&
			len(named(ended, "RunWorkflow:"+contract.PlannedEventWorkflowName)) == 1
	})

	request := named(rec.Ended(), "POST /integrations/v1/orders")
	if len(request) != 1 || request[0].SpanKind() != trace.SpanKindServer {
		t.Fatalf("server spans of the order create: %d, want one", len(request))
	}
	traceID := request[0].SpanContext().TraceID()
	inTrace := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID() == traceID {
			inTrace[s.SpanContext().SpanID()] = s
		}
	}
	// Every stage is in the request's trace, under the request's span.
	for _, stage := range []string{"db.transaction", "StartWorkflow:", "RunWorkflow:", "StartActivity:", "RunActivity:", "webhook POST"} {
		found := false
		for _, s := range inTrace {
			if strings.HasPrefix(s.Name(), stage) {
				found = true
				if !descends(s, request[0], inTrace) {
					t.Errorf("span %q is in the trace but not under the request's span", s.Name())
				}
			}
		}
		if !found {
			t.Errorf("no %q span in the request's trace; spans: %v", stage, names(inTrace))
		}
	}
	// One POST span per attempt, each under that attempt's activity span, with its attributes.
	for i, s := range posts() {
		if s.SpanContext().TraceID() != traceID {
			t.Errorf("attempt %d's POST is in another trace", i+1)
			continue
		}
		attrs := attributes(s)
		want := map[attribute.Key]string{tracing.AttrEventID: eventID, tracing.AttrEndpointID: ep.id.String()}
		for k, v := range want {
			if attrs[k] != v {
				t.Errorf("POST span %s = %q, want %q", k, attrs[k], v)
			}
		}
		if parent := inTrace[s.Parent().SpanID()]; parent == nil || !strings.HasPrefix(parent.Name(), "RunActivity:") {
			t.Errorf("POST span's parent is not an activity attempt's span")
		}
		if s.SpanKind() != trace.SpanKindClient {
			t.Errorf("POST span kind %v, want client", s.SpanKind())
		}
	}
	attempts := map[string]string{}
	for _, s := range posts() {
		a := attributes(s)
		attempts[a[tracing.AttrAttempt]] = a[tracing.AttrOutcome]
	}
	if attempts["1"] != "failed" || attempts["2"] != "succeeded" {
		t.Errorf("POST spans by attempt: %v, want 1 failed and 2 succeeded", attempts)
	}

	var line map[string]any
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `"route":"/integrations/v1/orders"`) {
			_ = json.Unmarshal([]byte(l), &line)
		}
	}
	if line["trace_id"] != traceID.String() {
		t.Errorf("the request's log line carries trace_id %v, want %s: %v", line["trace_id"], traceID, line)
	}
}

// named are the spans called name.
func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// descends reports whether s is root or under it, following parents within the trace.
func descends(s, root sdktrace.ReadOnlySpan, trace map[trace.SpanID]sdktrace.ReadOnlySpan) bool {
	for cur := s; cur != nil; cur = trace[cur.Parent().SpanID()] {
		if cur.SpanContext().SpanID() == root.SpanContext().SpanID() {
			return true
		}
	}
	return false
}

func attributes(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
	out := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value.Emit()
	}
	return out
}

func names(spans map[trace.SpanID]sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}
