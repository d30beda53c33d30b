package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"wds/internal/dev/temporaldev"
	"wds/workflows/contract"
)

// An attempt the receiver answered 500 is a failed activity in the workflow's history, the Temporal
// UI's record, with the HTTP status and the error, and is not retried by Temporal: the workflow takes
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
	var failed, completed []string
	it := h.temporal.GetWorkflowHistory(h.ctx, rows[0].WorkflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			f := ev.GetActivityTaskFailedEventAttributes().GetFailure()
			failed = append(failed, f.GetApplicationFailureInfo().GetType()+": "+f.GetMessage())
		case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			completed = append(completed, ev.String())
		}
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], contract.ErrTypeAttemptFailed+": attempt 1 failed: HTTP 500; next attempt at "+
		rows[0].NextAttemptAt.UTC().Format(time.RFC3339)) || len(completed) != 1 {
		t.Fatalf("history: failed activities %q, %d completed, want attempt 1 failed and attempt 2 completed", failed, len(completed))
	}
}
