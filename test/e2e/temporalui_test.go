package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/grpc"

	"wds/internal/dev/temporaldev"
	"wds/internal/platform/temporalclient"
	"wds/models"
	"wds/workflows/contract"
)

// An attempt the receiver answered 500 is a failed activity in the workflow's history, the Temporal
// UI's record, with the HTTP status and the error, and is not retried by Temporal: the attempt itself
// is a local activity (which the UI draws like a success), followed by a regular RecordFailedAttempt
// that fails with its outcome. The workflow takes it as the attempt's outcome and the ladder's next
// attempt succeeds. The delivery log has exactly one row per attempt.
func TestAFailedAttemptIsAFailedActivityInTheHistory(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	// A gap longer than the shortened ladder's second: the workflow skips the timer when recording
	// the failure outlasts the gap, which a loaded machine can make it do.
	h.starter.Schedule = []time.Duration{5 * time.Second}
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
	var failed, scheduled, timers []string
	var locals, failedLocals int
	for _, ev := range h.history(rows[0].WorkflowID) {
		var summary string
		_ = converter.GetDefaultDataConverter().FromPayload(ev.GetUserMetadata().GetSummary(), &summary)
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_TIMER_STARTED:
			timers = append(timers, summary)
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled = append(scheduled, ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()+" "+summary)
		case enums.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			f := ev.GetActivityTaskFailedEventAttributes().GetFailure()
			for f != nil && f.GetApplicationFailureInfo() == nil {
				f = f.GetCause()
			}
			var res contract.AttemptResult
			if f != nil && converter.GetDefaultDataConverter().FromPayloads(f.GetApplicationFailureInfo().GetDetails(), &res) == nil &&
				res.ResponseStatus != nil && f.GetApplicationFailureInfo().GetNonRetryable() {
				failed = append(failed, fmt.Sprintf("%s: %s (HTTP %d)", f.GetApplicationFailureInfo().GetType(), f.GetMessage(), *res.ResponseStatus))
			} else {
				failed = append(failed, ev.String())
			}
		case enums.EVENT_TYPE_MARKER_RECORDED:
			if m := ev.GetMarkerRecordedEventAttributes(); m.GetMarkerName() == "LocalActivity" && strings.HasPrefix(summary, "attempt ") {
				locals++
				if m.GetFailure() != nil {
					failedLocals++
				}
			}
		}
	}
	want := contract.ErrTypeAttemptFailed + ": attempt 1 failed: HTTP 500; next attempt at " + rows[0].NextAttemptAt.UTC().Format(time.RFC3339) + " (HTTP 500)"
	if len(failed) != 1 || failed[0] != want {
		t.Fatalf("failed activities %q, want %q", failed, want)
	}
	if len(scheduled) != 1 || !strings.HasPrefix(scheduled[0], contract.ActivityRecordFailed+" attempt 1 of 3 to ") || !strings.HasSuffix(scheduled[0], "/hooks failed") {
		t.Fatalf("regular activities %q, want the failed attempt's RecordFailedAttempt only", scheduled)
	}
	if locals != 2 || failedLocals != 0 {
		t.Fatalf("%d local attempts, %d of them failed; want 2 completed", locals, failedLocals)
	}
	// The retry's timer, drawn as a bar across the timeline, says it at a glance too.
	if len(timers) != 1 || !strings.HasSuffix(timers[0], "/hooks after attempt 1 failed: HTTP 500") {
		t.Fatalf("retry timers %q", timers)
	}
}

// A delivery whose first attempt succeeds costs seven history events: the start, its one workflow
// task (scheduled, started, completed), the attempt's local-activity marker, WdsDeliveryStatus set to
// succeeded, and the completion. The starter chose the delivery code's version (Design), so the
// workflow asks workflow.GetVersion nothing and records neither its marker nor TemporalChangeVersion.
// A receiver that answers in 9 s costs the same: past 80 % of Temporal's default 10 s task timeout
// the SDK would complete the task early and ask for another, but the starter gives the workflow a
// task timeout of twice the attempt's (contract.TaskTimeout), and the worker logs no warning of a
// slow workflow task for it (the SDK's, at 5 s unless the worker raises it).
func TestASuccessfulDeliveryIsSevenHistoryEvents(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	logs := &lockedBuffer{}
	c, err := client.Dial(client.Options{HostPort: srv.Address,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		name  string
		delay time.Duration
	}{{"answered at once", 0}, {"answered in 9 s", 9 * time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, c)
			h.startWorker()
			rc := newReceiver(t, func(int) int { time.Sleep(tc.delay); return http.StatusOK })
			ep := h.endpoint(rc, 3, "order.created")
			h.deliveredOrder(rc, "ord-history-1")
			h.settled()
			rows := h.deliveries(ep.id)
			if len(rows) != 1 || rows[0].Status != models.StatusSucceeded {
				t.Fatalf("log %+v, want one successful attempt", rows)
			}
			var got []string
			history := h.history(rows[0].WorkflowID)
			for _, ev := range history {
				name := ev.GetEventType().String()
				if m := ev.GetMarkerRecordedEventAttributes(); m != nil {
					name += " " + m.GetMarkerName()
				}
				got = append(got, name)
			}
			want := []string{"WorkflowExecutionStarted", "WorkflowTaskScheduled", "WorkflowTaskStarted", "WorkflowTaskCompleted",
				"MarkerRecorded LocalActivity", "UpsertWorkflowSearchAttributes", "WorkflowExecutionCompleted"}
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Fatalf("history\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if d := history[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowTaskTimeout().AsDuration(); d != contract.TaskTimeout {
				t.Fatalf("workflow task timeout %v, want %v", d, contract.TaskTimeout)
			}
			if strings.Contains(logs.String(), "TMPRL1104") {
				t.Fatalf("the worker warned of a slow workflow task:\n%s", logs)
			}
		})
	}
}

// eagerStarts counts the starts whose answer carried the workflow's first task.
type eagerStarts struct {
	mu            sync.Mutex
	starts, eager int
}

func (e *eagerStarts) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if r, ok := reply.(*workflowservice.StartWorkflowExecutionResponse); ok && err == nil {
		e.mu.Lock()
		e.starts++
		if r.GetEagerWorkflowTask() != nil {
			e.eager++
		}
		e.mu.Unlock()
	}
	return err
}

// A worker that starts an event's workflow itself (after commit, or from its relay) gets the first
// workflow task in the start's answer: no poll through the task queue before the attempt.
func TestAWorkerStartsDeliveriesEagerly(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	counted := &eagerStarts{}
	c, err := client.Dial(client.Options{HostPort: srv.Address, Logger: temporalclient.QuietLogger(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(counted.intercept)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := newHarness(t, c)
	h.startWorker()
	rc := newReceiver(t, ok)
	h.endpoint(rc, 3, "order.created")
	h.deliveredOrder(rc, "ord-eager-0") // the worker is up: its start may have raced it
	counted.mu.Lock()
	counted.starts, counted.eager = 0, 0
	counted.mu.Unlock()
	h.deliveredOrder(rc, "ord-eager-1")
	counted.mu.Lock()
	defer counted.mu.Unlock()
	if counted.starts == 0 || counted.eager != counted.starts {
		t.Fatalf("%d of %d starts answered with their first workflow task", counted.eager, counted.starts)
	}
}
