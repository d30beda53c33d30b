package temporalmetrics_test

import (
	"testing"
	"time"

	"wds/internal/platform/metrics/metricstest"
	"wds/internal/platform/metrics/temporalmetrics"
)

func TestTemporalSDKMetricsAreExposed(t *testing.T) {
	h, err := temporalmetrics.Handler()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := temporalmetrics.Handler(); err != nil {
		t.Fatalf("a second call (serve and worker in one process) must reuse the exporter: %v", err)
	}
	tagged := h.WithTags(map[string]string{"namespace": "default", "task_queue": "wds-webhooks"})
	tagged.Counter("temporal_request").Inc(2)
	tagged.Timer("temporal_activity_execution_latency").Record(250 * time.Millisecond)
	labels := map[string]string{"namespace": "default", "task_queue": "wds-webhooks"}
	if got := metricstest.Value(t, "temporal_request_total", labels); got < 2 {
		t.Errorf("temporal_request_total = %v, want >= 2", got)
	}
	if got := metricstest.Value(t, "temporal_activity_execution_latency_seconds", labels); got < 1 {
		t.Errorf("temporal_activity_execution_latency_seconds count = %v, want >= 1", got)
	}
}
