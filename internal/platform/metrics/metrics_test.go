package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sirupsen/logrus"

	"wds/internal/platform/metrics"
	"wds/internal/platform/metrics/metricstest"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// scrape returns the exposition text, as Prometheus would read it.
func scrape(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func TestMiddlewareCountsRequestsByRoutePatternAndRateLimits(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(metrics.Middleware)
	r.GET("/v1/orders/:id", func(c *gin.Context) { c.Status(http.StatusOK) })
	r.GET("/integrations/v1/orders", func(c *gin.Context) { c.Status(http.StatusTooManyRequests) })

	okLabels := map[string]string{"route": "/v1/orders/:id", "method": "GET", "status": "200"}
	limited := map[string]string{"route": "/integrations/v1/orders", "method": "GET", "status": "429"}
	unmatched := map[string]string{"route": metrics.RouteUnmatched, "method": "OTHER", "status": "404"}
	before := map[string]float64{
		"ok": metricstest.Value(t, "wds_http_requests_total", okLabels), "lim": metricstest.Value(t, "wds_http_requests_total", limited),
		"un": metricstest.Value(t, "wds_http_requests_total", unmatched), "hist": metricstest.Value(t, "wds_http_request_duration_seconds", okLabels),
		"rl": metricstest.Value(t, "wds_rate_limited_total", map[string]string{"api": "integration"}),
	}
	ids := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
	for _, id := range ids {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/orders/"+id, nil))
	}
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/integrations/v1/orders", nil))
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("BREW", "/no/such/"+uuid.NewString(), nil))

	checks := []struct {
		name   string
		labels map[string]string
		key    string
		delta  float64
	}{
		{"wds_http_requests_total", okLabels, "ok", 3},
		{"wds_http_request_duration_seconds", okLabels, "hist", 3},
		{"wds_http_requests_total", limited, "lim", 1},
		{"wds_http_requests_total", unmatched, "un", 1},
		{"wds_rate_limited_total", map[string]string{"api": "integration"}, "rl", 1},
	}
	for _, c := range checks {
		if got := metricstest.Value(t, c.name, c.labels) - before[c.key]; got != c.delta {
			t.Errorf("%s%v grew by %v, want %v", c.name, c.labels, got, c.delta)
		}
	}
	body := scrape(t)
	for _, leak := range append(ids, "BREW", "/no/such") {
		if strings.Contains(body, leak) {
			t.Errorf("%q leaked into the labels", leak)
		}
	}
}

func TestDeliveryAttemptRecordsOutcomeAttemptAndLatency(t *testing.T) {
	l := map[string]string{"outcome": "failed", "attempt": "3"}
	before := metricstest.Value(t, "wds_webhook_deliveries_total", l)
	beforeHist := metricstest.Value(t, "wds_webhook_delivery_duration_seconds", map[string]string{"outcome": "failed"})
	metrics.DeliveryAttempt("ep-failed", "failed", false, 3, 1500*time.Millisecond)
	metrics.DeliveryAttempt("ep-failed", "failed", false, 3, 20*time.Millisecond)
	if got := metricstest.Value(t, "wds_webhook_deliveries_total", l) - before; got != 2 {
		t.Errorf("deliveries grew by %v, want 2", got)
	}
	if got := metricstest.Value(t, "wds_webhook_delivery_duration_seconds", map[string]string{"outcome": "failed"}) - beforeHist; got != 2 {
		t.Errorf("latency histogram grew by %v, want 2", got)
	}
	if !strings.Contains(scrape(t), `wds_webhook_delivery_duration_seconds_bucket{outcome="failed",le="2"}`) {
		t.Errorf("latency histogram buckets missing")
	}
}

func TestDroppedChainsAreCountedPerEndpoint(t *testing.T) {
	ep, other := uuid.NewString(), uuid.NewString()
	metrics.DeliveryAttempt(ep, "dropped", true, 6, time.Second)
	metrics.DeliveryAttempt(ep, "dropped", true, 6, time.Second)
	metrics.DeliveryAttempt(other, "failed", false, 1, time.Second)
	metrics.DeliveryAttempt(other, "succeeded", false, 2, time.Second)
	if got := metricstest.Value(t, "wds_webhook_dropped_total", map[string]string{"endpoint_id": ep}); got != 2 {
		t.Errorf("dropped for %s = %v, want 2", ep, got)
	}
	if strings.Contains(scrape(t), `wds_webhook_dropped_total{endpoint_id="`+other+`"}`) {
		t.Errorf("an endpoint that dropped nothing has a dropped series")
	}
}

func TestRelayPassesStartsAndRecoveries(t *testing.T) {
	ok, failed := map[string]string{"result": "ok"}, map[string]string{"result": "failed"}
	before := []float64{metricstest.Value(t, "wds_relay_passes_total", ok), metricstest.Value(t, "wds_relay_passes_total", failed),
		metricstest.Value(t, "wds_relay_started_total", nil), metricstest.Value(t, "wds_relay_recoveries_total", nil)}
	metrics.RelayPass(0, true, false)
	metrics.RelayPass(3, false, true)
	metrics.RelayPass(2, false, false)
	after := []float64{metricstest.Value(t, "wds_relay_passes_total", ok), metricstest.Value(t, "wds_relay_passes_total", failed),
		metricstest.Value(t, "wds_relay_started_total", nil), metricstest.Value(t, "wds_relay_recoveries_total", nil)}
	for i, want := range []float64{2, 1, 5, 1} {
		if got := after[i] - before[i]; got != want {
			t.Errorf("series %d grew by %v, want %v", i, got, want)
		}
	}
}

func TestGateWaitObservesEveryTurnAndCountsRefusals(t *testing.T) {
	before, busy := metricstest.Value(t, "wds_db_gate_wait_seconds", nil), metricstest.Value(t, "wds_db_gate_busy_total", nil)
	metrics.GateWait(0, false)
	metrics.GateWait(10*time.Second, true)
	if got := metricstest.Value(t, "wds_db_gate_wait_seconds", nil) - before; got != 2 {
		t.Errorf("gate waits grew by %v, want 2", got)
	}
	if got := metricstest.Value(t, "wds_db_gate_busy_total", nil) - busy; got != 1 {
		t.Errorf("refusals grew by %v, want 1", got)
	}
}

func TestOutboxCollectorReportsBacklogAndOldestAge(t *testing.T) {
	db := pgtest.New(t)
	org := uuid.New()
	if err := db.Exec("INSERT INTO orgs (id, name) VALUES (?, 'o')", org).Error; err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second) // PostgreSQL keeps microseconds: keep ages exact
	insert := func(age time.Duration, dispatched bool) {
		t.Helper()
		var at any
		if dispatched {
			at = now
		}
		err := db.Exec(`INSERT INTO events (id, org_id, type, body, created_at, dispatched_at) VALUES (?, ?, 'order.created', '{}', ?, ?)`,
			uuid.New(), org, now.Add(-age), at).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	insert(90*time.Second, false)
	insert(10*time.Second, false)
	insert(time.Hour, true) // dispatched: neither counted nor the oldest

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewOutboxCollectorAt(db, func() time.Time { return now }))
	want := `
# HELP wds_outbox_backlog Rows not yet handed to Temporal, by queue (events: the outbox; webhook_dispatches: re-fires and tests).
# TYPE wds_outbox_backlog gauge
wds_outbox_backlog{queue="events"} 2
wds_outbox_backlog{queue="webhook_dispatches"} 0
# HELP wds_outbox_oldest_age_seconds Age of the oldest row not yet handed to Temporal, by queue; 0 when the queue is empty.
# TYPE wds_outbox_oldest_age_seconds gauge
wds_outbox_oldest_age_seconds{queue="events"} 90
wds_outbox_oldest_age_seconds{queue="webhook_dispatches"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	// A database that is gone fails these series only, with an error a scrape shows.
	sqlDB, _ := db.DB()
	_ = sqlDB.Close()
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "outbox backlog of events") {
		t.Errorf("gather with the database closed: %v", err)
	}
}

func TestServerServesMetricsOnItsOwnListener(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	s, err := metrics.Start("127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get("http://" + s.Addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "go_goroutines") {
		t.Errorf("GET /metrics: %d %.200s", res.StatusCode, body)
	}
	if _, err := metrics.Start(s.Addr, log); err == nil || !strings.Contains(err.Error(), "WDS_METRICS_ADDR") {
		t.Errorf("second listener on a taken address: %v, want an error naming WDS_METRICS_ADDR", err)
	}
	s.Stop()
	if _, err := http.Get("http://" + s.Addr + "/metrics"); err == nil {
		t.Error("listener still answers after Stop")
	}
}

func TestProfilerServesCPUProfilesOnItsOwnListener(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	s, err := metrics.StartProfiler("127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	res, err := http.Get("http://" + s.Addr + "/debug/pprof/profile?seconds=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || len(body) == 0 || res.Header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("GET profile?seconds=1: %d %s %.200q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if res, err := http.Get("http://" + s.Addr + "/metrics"); err != nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("the profiler's listener serves /metrics too: %v %v", res, err)
	}
	if _, err := metrics.StartProfiler(s.Addr, log); err == nil || !strings.Contains(err.Error(), "WDS_PPROF_ADDR") {
		t.Errorf("second profiler on a taken address: %v, want an error naming WDS_PPROF_ADDR", err)
	}
}
