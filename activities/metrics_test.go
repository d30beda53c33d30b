package activities_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/platform/metrics"
	"wds/models"
	"wds/test/deliverytest"
)

// deliveryCount reads wds_webhook_deliveries_total{outcome,attempt} and the latency histogram's count
// for outcome from the process registry.
func deliveryCount(t *testing.T, outcome models.Status, attempt string) (total, latencies float64) {
	t.Helper()
	fams, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case f.GetName() == "wds_webhook_deliveries_total" && labels["outcome"] == string(outcome) && labels["attempt"] == attempt:
				total = m.GetCounter().GetValue()
			case f.GetName() == "wds_webhook_delivery_duration_seconds" && labels["outcome"] == string(outcome):
				latencies = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return total, latencies
}

func TestDeliverRecordsMetricsOncePerAttempt(t *testing.T) {
	f := newFixture(t)
	status := http.StatusOK
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) })
	ep := f.Endpoint(rc.Srv.URL + "/hook")
	ev := f.Event(events.OrderCreated, map[string]any{"id": uuid.New()})
	acts := f.Acts(rc, true)

	okBefore, okLatBefore := deliveryCount(t, models.StatusSucceeded, "1")
	in := deliverytest.Attempt(ev, ep.ID, 1, deliverytest.Later())
	if res, err := acts.Deliver(f.Ctx, in); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("attempt 1: %+v %v", res, err)
	}
	// The same task run again (a retried activity) sends nothing and counts nothing.
	if _, err := acts.Deliver(f.Ctx, in); err != nil {
		t.Fatal(err)
	}
	if total, lat := deliveryCount(t, models.StatusSucceeded, "1"); total-okBefore != 1 || lat-okLatBefore != 1 {
		t.Errorf("succeeded attempt 1 counted %v times with %v latencies, want 1 and 1", total-okBefore, lat-okLatBefore)
	}

	status = http.StatusServiceUnavailable
	failBefore, _ := deliveryCount(t, models.StatusFailed, "2")
	if res, err := acts.Deliver(f.Ctx, deliverytest.Attempt(ev, ep.ID, 2, deliverytest.Later())); err != nil || res.Outcome != models.StatusFailed {
		t.Fatalf("attempt 2: %+v %v", res, err)
	}
	if total, _ := deliveryCount(t, models.StatusFailed, "2"); total-failBefore != 1 {
		t.Errorf("failed attempt 2 counted %v times, want 1", total-failBefore)
	}
}
