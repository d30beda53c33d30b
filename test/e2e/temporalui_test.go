package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"wds/internal/dev/temporaldev"
	"wds/workflows/contract"
)

// An attempt the receiver answered 500 is a failed (local) activity in the workflow's history, the
// Temporal UI's record, with the HTTP status and the error, and is not retried by Temporal: the workflow takes
// it as the attempt's outcome and the ladder's next attempt succeeds. The delivery log has exactly one
// row per attempt.
func TestAFailedAttemptIsAFailedActivityInTheHistory(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()
	rc := newReceiver(t, failFirst(1))
	ep := h.endpoint(rc, 3, "order.created")
	if status, out := h.order("ord-ui-1"); status != http.StatusCreated {
		t.Fatalf("create order: %d %v", status, out)
	}
	h.settled()
	rows := h.deliveries(ep.id)
	if len(rows) != 2 || rows[0].Status != "failed" || *rows[0].ResponseStatus != 500 || rows[1].Status != "succeeded" || rc.count() != 2 {
		t.Fatalf("log %+v after %d POSTs, want one failed attempt and one success", rows, rc.count())
	}
	// Attempts are local activities: each a LocalActivity marker, with its failure when it failed.
	var failed, completed, timers []string
	it := h.temporal.GetWorkflowHistory(h.ctx, rows[0].WorkflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enums.EVENT_TYPE_TIMER_STARTED {
			var summary string
			_ = converter.GetDefaultDataConverter().FromPayload(ev.GetUserMetadata().GetSummary(), &summary)
			timers = append(timers, summary)
		}
		m := ev.GetMarkerRecordedEventAttributes()
		if ev.GetEventType() != enums.EVENT_TYPE_MARKER_RECORDED || m.GetMarkerName() != "LocalActivity" {
			continue
		}
		f := m.GetFailure()
		for f != nil && f.GetApplicationFailureInfo() == nil {
			f = f.GetCause()
		}
		if f != nil {
			failed = append(failed, f.GetApplicationFailureInfo().GetType()+": "+f.GetMessage())
		} else {
			completed = append(completed, ev.String())
		}
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], contract.ErrTypeAttemptFailed+": attempt 1 failed: HTTP 500; next attempt at "+
		rows[0].NextAttemptAt.UTC().Format(time.RFC3339)) || len(completed) != 1 {
		t.Fatalf("history: failed activities %q, %d completed, want attempt 1 failed and attempt 2 completed", failed, len(completed))
	}
	// The UI marks a local activity failed only in its details: the retry's timer says it at a glance.
	if len(timers) != 1 || !strings.HasSuffix(timers[0], "/hooks after attempt 1 failed: HTTP 500") {
		t.Fatalf("retry timers %q", timers)
	}
}
