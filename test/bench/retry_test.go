package bench

import (
	"bytes"
	"net/http"
	"testing"
)

// TestPerRetryIsTheFailedOnceSideLessTheFirstAttemptSide: what a retry costs is the per-event figure
// of events that failed once less that of events delivered at the first attempt, process by process
// and operation by operation, a process or operation only one side saw included.
func TestPerRetryIsTheFailedOnceSideLessTheFirstAttemptSide(t *testing.T) {
	first := map[string]float64{"temporal": 6.25, "wds worker": 2.0, "postgres": 1.5}
	failedOnce := map[string]float64{"temporal": 14.5, "wds worker": 4.75, "postgres": 1.25, "temporal postgres": 3}
	got := perRetry(failedOnce, first)
	want := map[string]float64{"temporal": 8.25, "wds worker": 2.75, "postgres": -0.25, "temporal postgres": 3}
	if len(got) != len(want) {
		t.Fatalf("perRetry = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("perRetry[%q] = %v, want %v", k, got[k], v)
		}
	}
	firstAsks := Asks{PerItem: map[string]float64{"StartWorkflowExecution": 1, "RespondWorkflowTaskCompleted": 1}, TotalCalls: 2}
	onceAsks := Asks{PerItem: map[string]float64{"StartWorkflowExecution": 1, "RespondWorkflowTaskCompleted": 3,
		"PollWorkflowTaskQueue": 2, "RespondActivityTaskCompleted": 1}, TotalCalls: 7}
	c := retryCostOf(RetryCost{Retries: 10, EventsPerRound: 10, Rounds: 1}, first, failedOnce, firstAsks, onceAsks,
		History{Events: 9, Markers: 3}, History{Events: 21, Markers: 4, Timers: 1, Activities: 1})
	if c.RequestsTotal != 5 || c.Requests["RespondWorkflowTaskCompleted"] != 2 || c.Requests["PollWorkflowTaskQueue"] != 2 ||
		c.Requests["StartWorkflowExecution"] != 0 {
		t.Errorf("requests per retry %v (total %v)", c.Requests, c.RequestsTotal)
	}
	if c.HistoryEvents != 12 || c.TemporalCPU != 11.25 || c.CPU["wds worker"] != 2.75 {
		t.Errorf("per retry: %d history events, Temporal CPU %v, CPU %v", c.HistoryEvents, c.TemporalCPU, c.CPU)
	}
}

// TestOnceFailsEachEventsFirstPostOnly: the route the retry line delivers to answers 500 to the first
// POST of each event (by X-PC-Event-Id) and takes every later one, so each event is retried exactly once.
func TestOnceFailsEachEventsFirstPostOnly(t *testing.T) {
	r, err := newReceiver(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	c := r.srv.Client()
	post := func(eventID, orderID string) int {
		req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/once",
			bytes.NewBufferString(`{"data":{"id":"`+orderID+`"}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-PC-Event-Id", eventID)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, step := range []struct {
		event, order string
		want         int
	}{{"e1", "o1", 500}, {"e1", "o1", 200}, {"e2", "o2", 500}, {"e1", "o1", 200}, {"e2", "o2", 200}} {
		if got := post(step.event, step.order); got != step.want {
			t.Errorf("POST of %s: %d, want %d", step.event, got, step.want)
		}
	}
	if n := r.failedFirst(); n != 2 {
		t.Errorf("first POSTs failed: %d, want 2", n)
	}
	if _, ok := r.arrivedAt("o1"); !ok {
		t.Error("o1's retry not recorded as its arrival")
	}
}
