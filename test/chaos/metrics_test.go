package chaos

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"wds/deploy"
	"wds/internal/dev/temporaldev"
)

// TestDashboardAndAlertsReadOnlyExportedMetrics runs the real `wds serve` and `wds worker`, makes
// them do what fills every series (orders in, deliveries that succeed, a chain that is dropped) and
// checks that each series the Grafana dashboard and the alert rules read is on their /metrics: a
// renamed metric, or a panel naming one wds never exported, fails here instead of showing nothing.
func TestDashboardAndAlertsReadOnlyExportedMetrics(t *testing.T) {
	names, err := deploy.MetricNames()
	if err != nil {
		t.Fatal(err)
	}
	// Eager activities off, as on a cluster's defaults: activities then go through the task queue,
	// which is what the SDK's activity schedule-to-start latency measures.
	s := newSystemOn(t, 0, devServer(temporaldev.Options{NoEagerActivities: true}))
	worker := s.startWorker()
	s.endpoint("/ok", answerOK, 5)
	s.endpoint("/drop", resetConnection, 1) // one attempt that fails: the chain is dropped
	l := newLoad(s)
	for range 3 {
		l.create()
	}
	if l.classes["2xx"] != 3 {
		t.Fatalf("creates answered %s, want three 201", l.answers())
	}
	var missing []string
	for deadline := time.Now().Add(dur(90*time.Second, 90*time.Second)); ; time.Sleep(250 * time.Millisecond) {
		exported := scrapeMetrics(t, s.serve) + scrapeMetrics(t, worker)
		missing = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return sampleOf(exported, n) })
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(missing) > 0 {
		t.Errorf("the dashboard or the alert rules read series no running wds exports: %v", missing)
	}
}

// scrapeMetrics reads a process's /metrics as Prometheus does; a process not answering yet gives "".
func scrapeMetrics(t *testing.T, p *proc) string {
	t.Helper()
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// sampleOf reports whether the exposition text has a sample of the series name.
func sampleOf(exposition, name string) bool {
	for _, line := range strings.Split(exposition, "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			return true
		}
	}
	return false
}
