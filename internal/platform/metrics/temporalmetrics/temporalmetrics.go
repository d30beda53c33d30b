// Package temporalmetrics exposes the Temporal SDK's own metrics on wds's /metrics, apart from package
// metrics so that the packages which only count (the database, the outbox) link no Temporal code.
package temporalmetrics

import (
	"fmt"
	"sync"

	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"

	"wds/internal/platform/metrics"
)

var temporalOnce = sync.OnceValues(newTemporalHandler)

// Handler is the metrics handler to pass as client.Options.MetricsHandler: the Temporal
// SDK's own metrics (temporal_request_total, temporal_workflow_task_schedule_to_start_latency_seconds,
// temporal_worker_task_slots_available, ...) exposed on our /metrics next to ours.
//
// The bridge is the SDK's OpenTelemetry contrib module into OpenTelemetry's Prometheus exporter,
// both maintained upstream (the tally contrib is the older path and is not published on the module
// proxy this project uses). The exporter is registered once per process, so every caller shares it.
func Handler() (client.MetricsHandler, error) { return temporalOnce() }

func newTemporalHandler() (client.MetricsHandler, error) {
	exporter, err := otelprom.New(
		otelprom.WithRegisterer(metrics.Registry),
		otelprom.WithoutTargetInfo(),
		otelprom.WithoutScopeInfo(),
	)
	if err != nil {
		return nil, fmt.Errorf("temporal metrics exporter: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	h := temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter: provider.Meter("temporal-sdk-go"),
		// The SDK's counters only ever grow; as monotonic sums they export as Prometheus counters
		// (with _total) that rate() understands, instead of gauges.
		UseMonotonicCounters: true,
		// A metric the meter refuses must not take the worker down.
		OnError: func(error) {},
	})
	// The alert WdsNonDeterminism (deploy/prometheus/alerts.yml) reads the SDK's count of workflow
	// tasks failed on non-determinism, which the SDK creates at the first such failure: start it at 0,
	// so a worker that never had one exports the series and the rule reads 0, not nothing.
	h.WithTags(map[string]string{NonDeterminismTag: NonDeterminismReason}).Counter(TaskFailedCounter).Inc(0)
	return h, nil
}

// The SDK's counter of failed workflow tasks and the tag and value it gives a non-determinism error
// (a worker whose code does not match the history it replays).
const (
	TaskFailedCounter    = "temporal_workflow_task_execution_failed"
	NonDeterminismTag    = "failure_reason"
	NonDeterminismReason = "NonDeterminismError"
)
