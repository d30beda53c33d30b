package config

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	t.Setenv("WDS_WEBHOOK_RETRY_SCHEDULE", "")
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 8 * time.Hour}
	if len(c.WebhookRetrySchedule) != len(want) {
		t.Fatalf("schedule %v", c.WebhookRetrySchedule)
	}
	for i := range want {
		if c.WebhookRetrySchedule[i] != want[i] {
			t.Fatalf("schedule %v", c.WebhookRetrySchedule)
		}
	}
	if c.HTTPAddr != ":8080" || c.DataDir != "./.wds" || c.TemporalNamespace != "default" || c.LogFormat != "json" ||
		c.DeploymentName != "wds" || c.BuildID != "" || c.PromoteVersion != PromoteFirst {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestErrorsNameTheVariable(t *testing.T) {
	cases := map[string][2]string{
		"WDS_LOG_LEVEL":              {"loud", "WDS_LOG_LEVEL"},
		"WDS_LOG_FORMAT":             {"xml", "WDS_LOG_FORMAT"},
		"WDS_TRUSTED_PROXIES":        {"10.0.0.0/8,nonsense", "WDS_TRUSTED_PROXIES"},
		"WDS_WEBHOOK_RETRY_SCHEDULE": {"5m,1m", "WDS_WEBHOOK_RETRY_SCHEDULE"},
		"WDS_WEBHOOK_ALLOW_PRIVATE":  {"maybe", "WDS_WEBHOOK_ALLOW_PRIVATE"},
		"WDS_DB_CONCURRENCY":         {"-1", "WDS_DB_CONCURRENCY"},
		"WDS_PPROF_ADDR":             {"localhost", "WDS_PPROF_ADDR"},
		"WDS_DEPLOYMENT_NAME":        {"wds.eu", "WDS_DEPLOYMENT_NAME"},
		"WDS_BUILD_ID":               {strings.Repeat("b", 256), "WDS_BUILD_ID"},
		"WDS_PROMOTE_VERSION":        {"sometimes", "WDS_PROMOTE_VERSION"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, c[0])
			_, err := Load()
			if err == nil || !strings.Contains(err.Error(), c[1]) {
				t.Fatalf("err = %v, want it to name %s", err, c[1])
			}
		})
	}
}

// The profiler on the API's or the metrics' port would fail start-up naming the wrong listener.
func TestProfilerNeedsAPortOfItsOwn(t *testing.T) {
	for _, addr := range []string{":8080", "127.0.0.1:9090"} {
		t.Setenv("WDS_PPROF_ADDR", addr)
		if _, err := Load(); err == nil || !strings.Contains(err.Error(), "WDS_PPROF_ADDR") {
			t.Errorf("WDS_PPROF_ADDR=%s: err = %v, want it refused, naming WDS_PPROF_ADDR", addr, err)
		}
	}
	t.Setenv("WDS_PPROF_ADDR", "127.0.0.1:6060")
	if c, err := Load(); err != nil || c.PprofAddr != "127.0.0.1:6060" {
		t.Errorf("WDS_PPROF_ADDR=127.0.0.1:6060: %v %v", c, err)
	}
}

func TestEncryptionKeyMessage(t *testing.T) {
	err := (&Config{}).RequireEncryptionKey()
	if err == nil || !strings.Contains(err.Error(), "WDS_ENCRYPTION_KEY") {
		t.Fatalf("err = %v", err)
	}
}

// TestTimeoutsFitTogether: the limits of config/timeouts.go bound one another, so changing one
// alone cannot make a request's 503 unwritable or let database work outlive its request.
func TestTimeoutsFitTogether(t *testing.T) {
	for _, c := range []struct {
		what  string
		holds bool
	}{
		{"every timeout is set", HTTPReadHeaderTimeout > 0 && HTTPReadTimeout > 0 && RequestTimeout > 0 &&
			HTTPWriteTimeout > 0 && HTTPIdleTimeout > 0 && DBStatementTimeout > 0 && DBLockTimeout > 0 && DBTurnWait > 0 &&
			DBCancelGrace > 0 && DBIdleInTransactionTimeout > 0 && ShutdownGrace > 0},
		{"a request in flight at SIGTERM can finish and answer", ShutdownGrace >= HTTPWriteTimeout},
		{"no transaction sits idle longer than a request may live", DBIdleInTransactionTimeout <= RequestTimeout},
		{"headers arrive within the read timeout", HTTPReadHeaderTimeout <= HTTPReadTimeout},
		{"the answer to a request cut off by its deadline can still be written", HTTPWriteTimeout >= RequestTimeout+DBCancelGrace+5*time.Second},
		{"no statement outlives its request", DBStatementTimeout <= RequestTimeout},
		{"a lock wait ends before the statement's own timeout", DBLockTimeout < DBStatementTimeout},
		{"a queued request gives up while it can still be told so", DBTurnWait < RequestTimeout},
	} {
		if !c.holds {
			t.Errorf("config/timeouts.go: %s does not hold", c.what)
		}
	}
}

// The metrics listener has no authentication: by default only the host itself reaches it, and a
// deployment names the private interface Prometheus scrapes (compose sets :9090 inside its network).
func TestTheMetricsListenerDefaultsToLoopback(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	host, _, err := net.SplitHostPort(c.MetricsAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Fatalf("WDS_METRICS_ADDR defaults to %q, want a loopback address", c.MetricsAddr)
	}
}
