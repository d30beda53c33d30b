package database_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"gorm.io/gorm"

	"wds/internal/platform/tracing"
	"wds/test/pgtest"
)

// A transaction inside a traced request is a child span of it, rolled back or not; one outside any
// trace (the relay's passes) makes no span, so it does not become a trace of its own.
func TestATransactionIsASpanOfTheTraceItRunsIn(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	db := openWith(t, pgtest.URL(t))
	noop := func(*gorm.DB) error { return nil }
	if err := db.Transaction(noop); err != nil {
		t.Fatal(err)
	}
	ctx, request := otel.Tracer("test").Start(context.Background(), "request")
	if err := db.WithContext(ctx).Transaction(noop); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	if err := db.WithContext(ctx).Transaction(func(*gorm.DB) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("err = %v, want the callback's", err)
	}
	request.End()
	var txs []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "db.transaction" {
			txs = append(txs, s)
		}
	}
	if len(txs) != 2 {
		t.Fatalf("%d transaction spans, want the 2 inside the request", len(txs))
	}
	for i, s := range txs {
		if s.Parent().SpanID() != request.SpanContext().SpanID() {
			t.Errorf("transaction %d is not a child of the request's span", i+1)
		}
	}
	rolledBack := false
	for _, kv := range txs[1].Attributes() {
		rolledBack = rolledBack || kv.Key == "db.rolled_back" && kv.Value.AsBool()
	}
	if !rolledBack {
		t.Errorf("the rolled-back transaction's span does not say so: %v", txs[1].Attributes())
	}
}
