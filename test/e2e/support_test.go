package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	sdkpb "go.temporal.io/api/sdk/v1"

	"wds/internal/dev/temporaldev"
	"wds/models"
	"wds/workflows/contract"
)

// dropped waits until the endpoint has n dropped chains and returns their dropped rows.
func (h *harness) dropped(endpointID uuid.UUID, n int) []models.Delivery {
	h.t.Helper()
	var rows []models.Delivery
	waitFor(h.t, 60*time.Second, fmt.Sprintf("%d dropped chains", n), func() bool {
		rows = nil
		h.db.Where("endpoint_id = ? AND status = 'dropped'", endpointID).Order("attempted_at").Find(&rows)
		return len(rows) >= n
	})
	return rows
}

func (h *harness) recovery(id string) map[string]any {
	h.t.Helper()
	status, rec := h.request(http.MethodGet, "/admin/v1/recoveries/"+id, h.ownerToken, nil)
	if status != http.StatusOK {
		h.t.Fatalf("recovery %s: %d %v", id, status, rec)
	}
	return rec
}

// TestRecoveryReFiresAnOutageOnceAcrossAWorkerRestartAndAHandReFire is the "our receiver was down
// yesterday" story: an endpoint drops thirty chains while its receiver is down; the receiver comes
// back; one recovery re-fires them at the endpoint's pace while an operator re-fires one by hand and
// the worker running the recovery stops halfway and another takes over. Every event reaches the
// receiver exactly once more.
func TestRecoveryReFiresAnOutageOnceAcrossAWorkerRestartAndAHandReFire(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()

	var up sync.Mutex // held while the receiver is down
	down := true
	rc := newReceiver(t, func(int) int {
		up.Lock()
		defer up.Unlock()
		if down {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	ep := h.endpoint(rc, 1, "order.created")
	since := time.Now().UTC()
	const outage = 30
	for i := range outage {
		if status, out := h.order(fmt.Sprintf("outage-%d", i)); status != http.StatusCreated {
			t.Fatalf("order %d: %d %v", i, status, out)
		}
	}
	drops := h.dropped(ep.id, outage)
	up.Lock()
	down = false
	up.Unlock()
	const rate = 5
	if status, out := h.call("/admin/v1/rpc/outbound_webhook_update", h.ownerToken, map[string]any{"p_id": ep.id, "p_rate_limit": rate}); status != http.StatusOK {
		t.Fatalf("rate limit: %d %v", status, out)
	}

	// Bad input changes nothing.
	for _, c := range []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{}, 422, "validation_failed"},
		{map[string]any{"since": "yesterday"}, 422, "validation_failed"},
		{map[string]any{"since": time.Now().Add(time.Hour).Format(time.RFC3339)}, 422, "invalid_parameter"},
		{map[string]any{"since": since.Format(time.RFC3339Nano), "until": since.Add(-time.Hour).Format(time.RFC3339)}, 422, "invalid_parameter"},
	} {
		if status, out := h.call("/admin/v1/endpoints/"+ep.id.String()+"/recover", h.ownerToken, c.body); status != c.status || out["error"] != c.code {
			t.Errorf("%v: %d %v, want %d %s", c.body, status, out, c.status, c.code)
		}
	}
	if status, out := h.call("/admin/v1/endpoints/"+uuid.NewString()+"/recover", h.ownerToken, map[string]any{"since": since}); status != 404 {
		t.Errorf("unknown endpoint: %d %v", status, out)
	}

	status, rec := h.call("/admin/v1/endpoints/"+ep.id.String()+"/recover", h.ownerToken, map[string]any{"since": since})
	if status != http.StatusAccepted || rec["total"] != float64(outage) || rec["status"] != "running" || rec["workflow_id"] != "recover-"+rec["id"].(string) {
		t.Fatalf("recover: %d %v", status, rec)
	}
	id := rec["id"].(string)
	if status, out := h.call("/admin/v1/endpoints/"+ep.id.String()+"/recover", h.ownerToken, map[string]any{"since": since}); status != 409 || out["error"] != "recovery_in_progress" {
		t.Fatalf("second recovery: %d %v", status, out)
	}

	// An operator re-fires the last dropped chain by hand while the recovery runs.
	status, re := h.call("/admin/v1/deliveries/"+drops[outage-1].ID.String()+"/refire", h.ownerToken, nil)
	if status != http.StatusOK {
		t.Fatalf("hand re-fire: %d %v", status, re)
	}

	// Halfway, the worker stops and another takes over.
	waitFor(t, 60*time.Second, "half the chains started", func() bool { return h.recovery(id)["started"].(float64) >= outage/2 })
	h.stop()
	h.startWorker()
	waitFor(t, 90*time.Second, "the recovery to complete", func() bool { return h.recovery(id)["status"] == "completed" })
	waitFor(t, 60*time.Second, "every event received once more", func() bool { return rc.count() == 2*outage })
	time.Sleep(time.Second)

	got := map[string]int{}
	for _, d := range rc.deliveries()[outage:] {
		got[d.eventID()]++
		verify(t, d, ep.secret)
	}
	for _, d := range drops {
		if got[d.EventID.String()] != 1 {
			t.Errorf("event %s received %d times after the outage, want 1", d.EventID, got[d.EventID.String()])
		}
	}
	final := h.recovery(id)
	if final["started"] != float64(outage-1) || final["finished_at"] == nil {
		t.Errorf("recovery %v: want %d started (one re-fired by hand)", final, outage-1)
	}
	var kinds []struct {
		Kind string
		N    int
	}
	h.db.Raw("SELECT kind, count(*) AS n FROM webhook_dispatches GROUP BY kind ORDER BY kind").Scan(&kinds)
	if fmt.Sprint(kinds) != fmt.Sprintf("[{recovery %d} {refire 1}]", outage-1) {
		t.Errorf("queued chains %v", kinds)
	}
	if most, _ := maxInAnySecond(rc.deliveries()[outage:]); most > rate {
		t.Errorf("the receiver got %d requests within one second, over the rate limit of %d", most, rate)
	}
	// Paced: no second window holds more than rate chains started by the recovery.
	var created []time.Time
	h.db.Raw("SELECT created_at FROM webhook_dispatches WHERE kind = 'recovery' ORDER BY created_at").Scan(&created)
	sort.Slice(created, func(i, j int) bool { return created[i].Before(created[j]) })
	for i := range created {
		if j := i + rate; j < len(created) && created[j].Sub(created[i]) < time.Second {
			t.Errorf("chains %d..%d started within %v, faster than %d a second", i, j, created[j].Sub(created[i]), rate)
		}
	}
	// The Temporal UI names the endpoint and the counts: the summary from the start, the current
	// details as the batches go.
	desc, err := h.temporal.DescribeWorkflow(h.ctx, contract.RecoveryWorkflowID(uuid.MustParse(id)), "")
	if err != nil {
		t.Fatal(err)
	}
	summary, _ := desc.GetStaticSummary()
	want := fmt.Sprintf("recover %d chains of %s/hooks since ", outage, rc.srv.URL)
	if len(summary) < len(want) || summary[:len(want)] != want {
		t.Errorf("workflow summary %q, want it to start %q", summary, want)
	}
	// The row says completed from the last batch's commit; the details follow once the workflow has
	// the batch's answer, and are final when it ends.
	ended, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	if err := h.temporal.GetWorkflow(ended, contract.RecoveryWorkflowID(uuid.MustParse(id)), "").Get(ended, nil); err != nil {
		t.Fatalf("the recovery's workflow: %v", err)
	}
	q, err := h.temporal.QueryWorkflow(h.ctx, contract.RecoveryWorkflowID(uuid.MustParse(id)), "", "__temporal_workflow_metadata")
	if err != nil {
		t.Fatal(err)
	}
	var meta sdkpb.WorkflowMetadata
	if err := q.Get(&meta); err != nil {
		t.Fatal(err)
	}
	wantDetails := fmt.Sprintf("Recovery of %s/hooks: %d of %d chains started, completed", rc.srv.URL, outage-1, outage)
	if meta.GetCurrentDetails() != wantDetails {
		t.Errorf("current details %q, want %q", meta.GetCurrentDetails(), wantDetails)
	}
}

// maxInAnySecond is the most receipts any one-second window of the receiver's log holds, and the
// shortest gap between two receipts.
func maxInAnySecond(got []received) (int, time.Duration) {
	at := make([]time.Time, len(got))
	for i, d := range got {
		at[i] = d.at
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	most, gap := 0, time.Duration(1<<62)
	for i := range at {
		if i > 0 {
			gap = min(gap, at[i].Sub(at[i-1]))
		}
		n := 0
		for j := i; j < len(at) && at[j].Sub(at[i]) < time.Second; j++ {
			n++
		}
		most = max(most, n)
	}
	return most, gap
}

// TestARateLimitedBacklogDoesNotHoldUpOtherEndpoints: a worker that runs two activities at once
// delivers twenty events to an endpoint limited to one a second and to an unlimited one. Held
// attempts wait on workflow timers, not in activity slots: the unlimited endpoint gets all twenty
// while the limited one has had only a few, and the limited one gets each at one a second.
func TestARateLimitedBacklogDoesNotHoldUpOtherEndpoints(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.maxActivities = 2
	h.startWorker()
	slow, fast := newReceiver(t, ok), newReceiver(t, ok)
	limited := h.endpoint(slow, 5, "vendor.created")
	if status, out := h.call("/admin/v1/rpc/outbound_webhook_update", h.ownerToken, map[string]any{"p_id": limited.id, "p_rate_limit": 1}); status != http.StatusOK {
		t.Fatalf("rate limit: %d %v", status, out)
	}
	h.endpoint(fast, 5, "vendor.created")
	const backlog = 20
	start := time.Now()
	for range backlog {
		h.emit("vendor.created")
	}
	waitFor(t, 30*time.Second, "the unlimited endpoint's deliveries", func() bool { return fast.count() == backlog })
	tookFast, slowSoFar := time.Since(start), slow.count()
	if slowSoFar > backlog/2 {
		t.Fatalf("the limited endpoint had %d of %d when the unlimited one had all (after %v)", slowSoFar, backlog, tookFast)
	}
	waitFor(t, 60*time.Second, "the limited endpoint's deliveries", func() bool { return slow.count() == backlog })
	if most, gap := maxInAnySecond(slow.deliveries()); most > 1 {
		t.Errorf("the limited endpoint got %d requests within one second (two %v apart)", most, gap)
	}
	// The attempt's row is written after the receiver answers, so the last one may land just after
	// the receipt the wait above saw.
	var rows, failed int64
	waitFor(t, 10*time.Second, "the limited endpoint's delivery log", func() bool {
		h.db.Model(&models.Delivery{}).Where("endpoint_id = ?", limited.id).Count(&rows)
		return rows >= backlog
	})
	h.db.Model(&models.Delivery{}).Where("endpoint_id = ? AND (attempt > 1 OR status <> 'succeeded')", limited.id).Count(&failed)
	if rows != backlog || failed != 0 {
		t.Errorf("the limited endpoint's log has %d rows, %d of them not a first successful attempt: waiting must not be an attempt", rows, failed)
	}
	t.Logf("unlimited endpoint: %d events in %v while the limited one had %d", backlog, tookFast.Round(time.Millisecond), slowSoFar)
}
