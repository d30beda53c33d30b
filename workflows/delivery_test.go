package workflows

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"wds/internal/platform/egress"
	"wds/models"
	"wds/workflows/contract"
)

var defaultSchedule = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 8 * time.Hour}

// receiver fakes the activities: it records every attempt with the workflow clock and answers with
// the outcome decide picks.
type receiver struct {
	env     *testsuite.TestWorkflowEnvironment
	targets []contract.Target
	decide  func(contract.AttemptInput) contract.AttemptResult
	// lose makes Deliver fail as if the worker died: attempt number -> how many of its tasks fail
	// (-1: every one).
	lose map[int]int

	// begin is when the workflow started, for decide functions that depend on time.
	begin time.Time

	// unrecorded makes Deliver report each failed attempt it hands off as sent but not recorded.
	unrecorded bool
	// refuseRecords is how many RecordFailedAttempt tasks fail as if the database were down.
	refuseRecords int

	mu       sync.Mutex
	attempts []recorded
	lost     []contract.LostAttempt
	failed   []contract.FailedAttemptInput // RecordFailedAttempt's inputs
	resolved int
}

type recorded struct {
	in contract.AttemptInput
	at time.Time
}

func (r *receiver) resolve(_ context.Context, in contract.ResolveInput) ([]contract.Target, error) {
	r.mu.Lock()
	r.resolved++
	r.mu.Unlock()
	if in.EndpointID == nil {
		return r.targets, nil
	}
	for _, t := range r.targets {
		if t.EndpointID == *in.EndpointID {
			return []contract.Target{t}, nil
		}
	}
	return nil, nil
}

func (r *receiver) deliver(_ context.Context, in contract.AttemptInput) (contract.AttemptResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, recorded{in: in, at: r.env.Now()})
	if n := r.lose[in.Attempt]; n != 0 {
		r.lose[in.Attempt] = n - 1
		return contract.AttemptResult{}, errors.New("worker lost")
	}
	// As the real activity does: a failed attempt, once recorded, fails the activity when asked to.
	res := r.decide(in)
	if in.ReportFailure && (res.Outcome == models.StatusFailed || res.Outcome == models.StatusDropped) {
		return contract.AttemptResult{}, contract.AttemptFailure(in, res)
	}
	if in.HandOffFailure && r.unrecorded && res.ReceiverFailed() {
		res.Unrecorded = &contract.Sent{Status: res.Outcome, Error: res.Error, AttemptedAt: r.env.Now()}
	}
	return res, nil
}

// recordFailed is RecordFailedAttempt: as the real activity does, it fails with the attempt's outcome.
func (r *receiver) recordFailed(_ context.Context, f contract.FailedAttemptInput) (contract.AttemptResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, f)
	if r.refuseRecords > 0 {
		r.refuseRecords--
		return contract.AttemptResult{}, errors.New("record delivery: database down")
	}
	res := f.Result
	res.Unrecorded = nil
	return res, contract.AttemptFailure(f.Attempt, res)
}

func (r *receiver) recordLost(_ context.Context, l contract.LostAttempt) (contract.AttemptResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost = append(r.lost, l)
	if l.Attempt.NextAttemptAt == nil {
		return contract.AttemptResult{Outcome: models.StatusDropped, Error: l.Error}, nil
	}
	return contract.AttemptResult{Outcome: models.StatusFailed, Error: l.Error}, nil
}

// alwaysFail is a receiver that answers 500 forever: failed, and dropped on the last attempt.
func alwaysFail(in contract.AttemptInput) contract.AttemptResult {
	if in.NextAttemptAt == nil {
		return contract.AttemptResult{Outcome: models.StatusDropped, Error: "HTTP 500"}
	}
	return contract.AttemptResult{Outcome: models.StatusFailed, Error: "HTTP 500"}
}

func newEnv(t *testing.T, r *receiver) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	// Under -race on a busy two-core machine a workflow task can take over the default 1 s without
	// any deadlock; a real one still fails the test.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 10 * time.Second})
	r.env = env
	env.RegisterWorkflowWithOptions(EventWorkflow, workflow.RegisterOptions{Name: contract.EventWorkflowName})
	env.RegisterWorkflowWithOptions(RefireWorkflow, workflow.RegisterOptions{Name: contract.RefireWorkflowName})
	env.RegisterWorkflowWithOptions(TestWorkflow, workflow.RegisterOptions{Name: contract.TestWorkflowName})
	env.RegisterActivityWithOptions(r.resolve, activity.RegisterOptions{Name: contract.ActivityResolveTargets})
	env.RegisterActivityWithOptions(r.deliver, activity.RegisterOptions{Name: contract.ActivityDeliver})
	env.RegisterActivityWithOptions(r.recordLost, activity.RegisterOptions{Name: contract.ActivityRecordLost})
	env.RegisterActivityWithOptions(r.recordFailed, activity.RegisterOptions{Name: contract.ActivityRecordFailed})
	return env
}

func target(max int) contract.Target {
	return contract.Target{EndpointID: uuid.New(), URL: "https://receiver.example/hook", MaxAttempts: max}
}

func runEvent(t *testing.T, r *receiver, schedule []time.Duration) (start time.Time) {
	t.Helper()
	env := newEnv(t, r)
	start = env.Now()
	env.ExecuteWorkflow(contract.EventWorkflowName, contract.EventParams{EventID: uuid.New(), OrgID: uuid.New(), EventType: "order.created", Schedule: schedule})
	ended(t, env)
	return start
}

// ended is how a finished workflow ended: a workflow that reached every endpoint completes with its
// Result; one that dropped a chain fails, not to be retried, with the Result in the failure.
func ended(t *testing.T, env *testsuite.TestWorkflowEnvironment) contract.Result {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not finish")
	}
	err := env.GetWorkflowError()
	if err == nil {
		var res contract.Result
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		if res.Status != contract.WorkflowSucceeded {
			t.Fatalf("a workflow that ended %s completed; want it failed", res.Status)
		}
		return res
	}
	res, ok := contract.DroppedResult(err)
	var app *temporal.ApplicationError
	if !ok || !errors.As(err, &app) || !app.NonRetryable() || res.Status == contract.WorkflowSucceeded {
		t.Fatalf("workflow: %v", err)
	}
	for _, c := range res.Chains {
		if c.Outcome == models.StatusDropped && !strings.Contains(app.Error(), c.EndpointID.String()) {
			t.Fatalf("the failure %q does not name the dropped endpoint %s", app.Error(), c.EndpointID)
		}
	}
	return res
}

func offsets(start time.Time, rs []recorded) []time.Duration {
	out := make([]time.Duration, len(rs))
	for i, r := range rs {
		out[i] = r.at.Sub(start)
	}
	return out
}

func TestLadderDelaysAreExactAndAnchoredOnTheFirstAttempt(t *testing.T) {
	const h, m = time.Hour, time.Minute
	cases := map[int][]time.Duration{
		1:  {0},
		5:  {0, m, 5 * m, 30 * m, 2 * h},
		6:  {0, m, 5 * m, 30 * m, 2 * h, 8 * h},
		10: {0, m, 5 * m, 30 * m, 2 * h, 8 * h, 16 * h, 24 * h, 32 * h, 40 * h},
	}
	for max, want := range cases {
		r := &receiver{targets: []contract.Target{target(max)}, decide: alwaysFail}
		start := runEvent(t, r, defaultSchedule)
		if got := offsets(start, r.attempts); !slices.Equal(got, want) {
			t.Errorf("max_attempts %d: attempts at %v, want %v", max, got, want)
		}
		for i, a := range r.attempts {
			if a.in.Attempt != i+1 {
				t.Errorf("max_attempts %d: attempt %d numbered %d", max, i+1, a.in.Attempt)
			}
			last := i == len(want)-1
			if last != (a.in.NextAttemptAt == nil) {
				t.Errorf("max_attempts %d: attempt %d next_attempt_at %v", max, i+1, a.in.NextAttemptAt)
			}
			if !last && !a.in.NextAttemptAt.Equal(start.Add(want[i+1])) {
				t.Errorf("max_attempts %d: attempt %d announces next at %v, want %v", max, i+1, a.in.NextAttemptAt.Sub(start), want[i+1])
			}
		}
		ids := map[uuid.UUID]bool{}
		for _, a := range r.attempts {
			ids[a.in.DeliveryID] = true
			if a.in.ChainID != r.attempts[0].in.ChainID {
				t.Errorf("max_attempts %d: chain id changed within a chain", max)
			}
		}
		if len(ids) != len(want) {
			t.Errorf("max_attempts %d: %d distinct delivery ids for %d attempts", max, len(ids), len(want))
		}
	}
}

func TestLadderStaysAnchoredWhenAttemptsAreSlow(t *testing.T) {
	r := &receiver{targets: []contract.Target{target(3)}, decide: alwaysFail}
	env := newEnv(t, r)
	// Each attempt takes 10 s (a receiver timing out): attempt 2 is still due at +1m, not +1m10s.
	env.OnActivity(contract.ActivityDeliver, mock.Anything, mock.Anything).After(10 * time.Second).Return(
		func(ctx context.Context, in contract.AttemptInput) (contract.AttemptResult, error) {
			return r.deliver(ctx, in)
		})
	start := env.Now()
	env.ExecuteWorkflow(contract.EventWorkflowName, contract.EventParams{EventID: uuid.New(), Schedule: defaultSchedule})
	ended(t, env)
	want := []time.Duration{10 * time.Second, time.Minute + 10*time.Second, 5*time.Minute + 10*time.Second}
	if got := offsets(start, r.attempts); !slices.Equal(got, want) {
		t.Fatalf("attempts completed at %v, want %v", got, want)
	}
}

func TestShortScheduleRepeatsItsLastDelay(t *testing.T) {
	r := &receiver{targets: []contract.Target{target(5)}, decide: alwaysFail}
	start := runEvent(t, r, []time.Duration{time.Second, 2 * time.Second})
	want := []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 6 * time.Second}
	if got := offsets(start, r.attempts); !slices.Equal(got, want) {
		t.Fatalf("attempts at %v, want %v", got, want)
	}
	// The same ladder in the form the starter now gives it.
	r = &receiver{targets: []contract.Target{target(5)}, decide: alwaysFail}
	env := newEnv(t, r)
	start = env.Now()
	env.ExecuteWorkflow(contract.EventWorkflowName, contract.EventParams{EventID: uuid.New(), RetrySchedule: contract.Durations{time.Second, 2 * time.Second}})
	ended(t, env)
	if got := offsets(start, r.attempts); !slices.Equal(got, want) {
		t.Fatalf("RetrySchedule: attempts at %v, want %v", got, want)
	}
}

func TestSuccessAtAttemptKStopsTheChain(t *testing.T) {
	for k := 1; k <= 5; k++ {
		r := &receiver{targets: []contract.Target{target(5)}, decide: func(in contract.AttemptInput) contract.AttemptResult {
			if in.Attempt == k {
				return contract.AttemptResult{Outcome: models.StatusSucceeded}
			}
			return alwaysFail(in)
		}}
		runEvent(t, r, defaultSchedule)
		if len(r.attempts) != k {
			t.Errorf("success at %d: %d attempts made", k, len(r.attempts))
		}
	}
}

func TestDroppedAfterTheLastAttempt(t *testing.T) {
	r := &receiver{targets: []contract.Target{target(3)}, decide: alwaysFail}
	runEvent(t, r, defaultSchedule)
	if len(r.attempts) != 3 || alwaysFail(r.attempts[2].in).Outcome != models.StatusDropped {
		t.Fatalf("want 3 attempts ending dropped, got %d", len(r.attempts))
	}
}

func TestDisableMidChainStopsIt(t *testing.T) {
	// The activity finds the endpoint disabled before attempt 3 and reports the chain dropped.
	r := &receiver{targets: []contract.Target{target(5)}, decide: func(in contract.AttemptInput) contract.AttemptResult {
		if in.Attempt == 3 {
			return contract.AttemptResult{Outcome: models.StatusDropped, Error: "endpoint_disabled"}
		}
		return alwaysFail(in)
	}}
	runEvent(t, r, defaultSchedule)
	if len(r.attempts) != 3 {
		t.Fatalf("%d attempts after the endpoint was disabled at attempt 3", len(r.attempts))
	}
}

func TestEachSubscribedEndpointGetsItsOwnParallelChain(t *testing.T) {
	ok, failing := target(2), target(2)
	r := &receiver{targets: []contract.Target{ok, failing}, decide: func(in contract.AttemptInput) contract.AttemptResult {
		if in.EndpointID == ok.EndpointID {
			return contract.AttemptResult{Outcome: models.StatusSucceeded}
		}
		return alwaysFail(in)
	}}
	env := newEnv(t, r)
	start := env.Now()
	env.ExecuteWorkflow(contract.EventWorkflowName, contract.EventParams{EventID: uuid.New(), OrgID: uuid.New(), EventType: "order.created", Schedule: defaultSchedule})
	res := ended(t, env)
	if res.Status != contract.WorkflowPartiallyDropped || len(res.Chains) != 2 || res.Chains[0].Outcome != models.StatusSucceeded ||
		res.Chains[1].Outcome != models.StatusDropped || res.Chains[1].EndpointID != failing.EndpointID {
		t.Fatalf("result %+v", res)
	}
	if strings.Contains(env.GetWorkflowError().Error(), ok.EndpointID.String()) {
		t.Fatalf("the failure names the endpoint that succeeded: %v", env.GetWorkflowError())
	}
	byEndpoint := map[uuid.UUID][]time.Duration{}
	chains := map[uuid.UUID]uuid.UUID{}
	for _, a := range r.attempts {
		byEndpoint[a.in.EndpointID] = append(byEndpoint[a.in.EndpointID], a.at.Sub(start))
		chains[a.in.EndpointID] = a.in.ChainID
	}
	if !slices.Equal(byEndpoint[ok.EndpointID], []time.Duration{0}) ||
		!slices.Equal(byEndpoint[failing.EndpointID], []time.Duration{0, time.Minute}) {
		t.Fatalf("attempts per endpoint: %v", byEndpoint)
	}
	if chains[ok.EndpointID] == chains[failing.EndpointID] {
		t.Fatal("two endpoints share a chain id")
	}
}

// An event whose starter planned the chains (targets, chain ids, first delivery ids, WdsEndpointIds at
// start) runs them without a lookup or an early search-attribute update; one started by an older wds
// (no chains, no WdsEndpointIds) still looks its targets up and publishes them, so both kinds of
// history replay on this code.
func TestPlannedAndUnplannedEventsDeliverAlike(t *testing.T) {
	for _, planned := range []bool{true, false} {
		ok, failing := target(2), target(2)
		r := &receiver{targets: []contract.Target{ok, failing}, decide: func(in contract.AttemptInput) contract.AttemptResult {
			if in.EndpointID == ok.EndpointID {
				return contract.AttemptResult{Outcome: models.StatusSucceeded}
			}
			return alwaysFail(in)
		}}
		env := newEnv(t, r)
		var upserts []temporal.SearchAttributes
		env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
			upserts = append(upserts, args.Get(0).(temporal.SearchAttributes))
		}).Return(nil)
		p := contract.EventParams{EventID: uuid.New(), OrgID: uuid.New(), EventType: "order.created", Schedule: defaultSchedule}
		if planned {
			for _, tg := range r.targets {
				p.Chains = append(p.Chains, contract.PlannedChain{Target: tg, ChainID: uuid.New(), FirstDeliveryID: uuid.New()})
			}
			ids := []string{ok.EndpointID.String(), failing.EndpointID.String()}
			if err := env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(contract.AttrEndpointIDs.ValueSet(ids))); err != nil {
				t.Fatal(err)
			}
		}
		env.ExecuteWorkflow(contract.EventWorkflowName, p)
		if res := ended(t, env); res.Status != contract.WorkflowPartiallyDropped {
			t.Fatalf("planned %v: result %+v", planned, res)
		}
		if len(r.attempts) != 3 {
			t.Fatalf("planned %v: %d attempts, want 3 (one success, a failure and its retry)", planned, len(r.attempts))
		}
		wantResolves, wantUpserts := 1, 2
		if planned {
			wantResolves, wantUpserts = 0, 1
			for _, a := range r.attempts {
				c := p.Chains[slices.IndexFunc(p.Chains, func(c contract.PlannedChain) bool { return c.EndpointID == a.in.EndpointID })]
				if a.in.ChainID != c.ChainID || (a.in.Attempt == 1) != (a.in.DeliveryID == c.FirstDeliveryID) {
					t.Fatalf("attempt %+v does not use the planned ids %+v", a.in, c)
				}
			}
		}
		if r.resolved != wantResolves || len(upserts) != wantUpserts {
			t.Fatalf("planned %v: %d lookups, %d upserts; want %d and %d", planned, r.resolved, len(upserts), wantResolves, wantUpserts)
		}
		if status, _ := upserts[len(upserts)-1].GetKeyword(contract.AttrDeliveryStatus); contract.WorkflowStatus(status) != contract.WorkflowPartiallyDropped {
			t.Fatalf("planned %v: final status %q", planned, status)
		}
	}
}

func TestRefireStartsAFreshChainAtAttemptOne(t *testing.T) {
	tg := target(3)
	r := &receiver{targets: []contract.Target{tg}, decide: alwaysFail}
	env := newEnv(t, r)
	start := env.Now()
	chainID := uuid.New()
	env.ExecuteWorkflow(contract.RefireWorkflowName, contract.RefireParams{EventID: uuid.New(), EndpointID: tg.EndpointID, ChainID: chainID, Schedule: defaultSchedule})
	if res := ended(t, env); res.Status != contract.WorkflowDropped {
		t.Fatalf("re-fire result %+v", res)
	}
	if got := offsets(start, r.attempts); !slices.Equal(got, []time.Duration{0, time.Minute, 5 * time.Minute}) {
		t.Fatalf("re-fire attempts at %v", got)
	}
	if r.attempts[0].in.Attempt != 1 || r.attempts[0].in.ChainID != chainID {
		t.Fatalf("re-fire began with attempt %d of chain %s", r.attempts[0].in.Attempt, r.attempts[0].in.ChainID)
	}
}

func TestTestEventIsOneAttemptUnderTheAnnouncedDeliveryID(t *testing.T) {
	tg := target(5)
	r := &receiver{targets: []contract.Target{tg}, decide: alwaysFail}
	env := newEnv(t, r)
	deliveryID := uuid.New()
	env.ExecuteWorkflow(contract.TestWorkflowName, contract.TestParams{EventID: uuid.New(), EndpointID: tg.EndpointID, ChainID: uuid.New(), DeliveryID: deliveryID})
	if res := ended(t, env); res.Status != contract.WorkflowDropped {
		t.Fatalf("test result %+v", res)
	}
	if len(r.attempts) != 1 || r.attempts[0].in.DeliveryID != deliveryID || !r.attempts[0].in.Test || r.attempts[0].in.NextAttemptAt != nil {
		t.Fatalf("test delivery attempts: %+v", r.attempts)
	}
}

func TestAWorkerOutageIsRetriedWithoutSpendingAnAttempt(t *testing.T) {
	r := &receiver{targets: []contract.Target{target(3)}, decide: alwaysFail, lose: map[int]int{1: 3, 2: 1}}
	runEvent(t, r, defaultSchedule)
	if len(r.lost) != 0 {
		t.Fatalf("attempts recorded lost: %+v", r.lost)
	}
	var numbers []int
	for _, a := range r.attempts {
		numbers = append(numbers, a.in.Attempt)
	}
	// Tasks of attempts 1 and 2 that failed inside wds ran again; the receiver still got its 3.
	if want := []int{1, 1, 1, 1, 2, 2, 3}; !slices.Equal(numbers, want) {
		t.Fatalf("tasks by attempt number %v, want %v", numbers, want)
	}
}

// The test environment gives up on an activity after 10 tries where the server waits
// infraPatience; either way the attempt is then recorded lost and the ladder goes on.
func TestAnAttemptThatNeverGetsThroughIsRecordedLost(t *testing.T) {
	r := &receiver{targets: []contract.Target{target(3)}, decide: alwaysFail, lose: map[int]int{1: -1}}
	runEvent(t, r, defaultSchedule)
	if len(r.lost) != 1 || r.lost[0].Attempt.Attempt != 1 {
		t.Fatalf("lost attempts recorded: %+v", r.lost)
	}
	if len(r.attempts) < 4 || r.attempts[1].in.Attempt != 1 {
		t.Fatalf("attempt 1 was not tried again before it was recorded lost: %+v", r.attempts)
	}
	last := r.attempts[len(r.attempts)-2:]
	if last[0].in.Attempt != 2 || last[1].in.Attempt != 3 {
		t.Fatalf("the ladder did not go on after the lost attempt: %+v", last)
	}
}

func TestSummarize(t *testing.T) {
	cases := []struct {
		in   []models.Status
		want contract.WorkflowStatus
	}{
		{nil, contract.WorkflowSucceeded},
		{[]models.Status{models.StatusSucceeded, models.StatusSucceeded}, contract.WorkflowSucceeded},
		{[]models.Status{models.StatusDropped}, contract.WorkflowDropped},
		{[]models.Status{models.StatusSucceeded, models.StatusDropped}, contract.WorkflowPartiallyDropped},
	}
	for _, c := range cases {
		if got := summarize(c.in); got != c.want {
			t.Errorf("summarize(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestWorkflowIDs(t *testing.T) {
	ev, ep := uuid.MustParse("11111111-1111-1111-1111-111111111111"), uuid.MustParse("22222222-2222-2222-2222-222222222222")
	if got := contract.RefireWorkflowID(ev, ep, 12); got != "webhook-refire/"+ev.String()+"/"+ep.String()+"/12" {
		t.Fatal(got)
	}
	if got := contract.EventWorkflowID(ev); got != "webhook-event/"+ev.String() {
		t.Fatal(got)
	}
	if got := contract.TestWorkflowID(ep); got != "webhook-test/"+ep.String() {
		t.Fatal(got)
	}
}

func TestAStopSignalEndsTheWaitAndTheChain(t *testing.T) {
	stoppedEP, other := target(5), target(5)
	stoppedAt := 90 * time.Second // during the wait for attempt 3 (due at +5m)
	r := &receiver{targets: []contract.Target{stoppedEP, other}}
	r.decide = func(in contract.AttemptInput) contract.AttemptResult {
		// The activity finds the endpoint disabled once it has been.
		if in.EndpointID == stoppedEP.EndpointID && r.env.Now().Sub(r.begin) >= stoppedAt {
			return contract.AttemptResult{Outcome: models.StatusDropped, Error: "endpoint_disabled"}
		}
		return alwaysFail(in)
	}
	env := newEnv(t, r)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(contract.SignalEndpointStopped, stoppedEP.EndpointID) }, stoppedAt)
	begin := env.Now()
	r.begin = begin
	env.ExecuteWorkflow(contract.EventWorkflowName, contract.EventParams{EventID: uuid.New(), Schedule: defaultSchedule})
	if res := ended(t, env); res.Status != contract.WorkflowDropped {
		t.Fatalf("result %+v", res)
	}
	var stoppedTimes, otherTimes []time.Duration
	for _, a := range r.attempts {
		if a.in.EndpointID == stoppedEP.EndpointID {
			stoppedTimes = append(stoppedTimes, a.at.Sub(begin))
		} else {
			otherTimes = append(otherTimes, a.at.Sub(begin))
		}
	}
	if !slices.Equal(stoppedTimes, []time.Duration{0, time.Minute, stoppedAt}) {
		t.Fatalf("stopped endpoint's attempts at %v: want the wait cut short at %v", stoppedTimes, stoppedAt)
	}
	if !slices.Equal(otherTimes, []time.Duration{0, time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}) {
		t.Fatalf("the other endpoint's chain was disturbed: %v", otherTimes)
	}
}

// A workflow that dropped a chain before VersionFailWhenDropped, replayed (by a query, say) after it,
// still completes with its Result, as its history says it did.
func TestAWorkflowFromBeforeFailWhenDroppedStillCompletes(t *testing.T) {
	r := &receiver{targets: []contract.Target{target(1)}, decide: alwaysFail}
	env := newEnv(t, r)
	env.OnGetVersion(VersionFailWhenDropped, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	env.ExecuteWorkflow(contract.EventWorkflowName, contract.EventParams{EventID: uuid.New(), Schedule: defaultSchedule})
	var res contract.Result
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("old path failed: %v", err)
	}
	if err := env.GetWorkflowResult(&res); err != nil || res.Status != contract.WorkflowDropped {
		t.Fatalf("old path result %+v (%v)", res, err)
	}
}

// An attempt the receiver failed is a failed activity (the Temporal UI shows it failed): Deliver
// itself under AttemptFails, a failed local one under AttemptLocal (the UI draws it like a success),
// and under AttemptRecorded the regular RecordFailedAttempt that follows the local one, handed what
// Deliver could not record. The ladder goes on as it did when the activity completed with the outcome:
// no attempt is recorded lost. A chain started before a version keeps its way until it ends.
func TestAFailedAttemptIsAFailedActivityAndTheLadderGoesOn(t *testing.T) {
	for _, version := range []workflow.Version{workflow.DefaultVersion, AttemptFails, AttemptLocal, AttemptRecorded} {
		r := &receiver{targets: []contract.Target{target(3)}, decide: alwaysFail, unrecorded: true}
		env := newEnv(t, r)
		env.OnGetVersion(ChangeAttempt, workflow.DefaultVersion, AttemptRecorded).Return(version)
		var failed []string // regular activities that failed
		env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, err error) {
			if err != nil {
				failed = append(failed, info.ActivityType.Name+": "+err.Error())
			}
		})
		// The test environment tells this listener neither the activity's name nor its error: it counts
		// the local activities, the lookup of the (unplanned) event's endpoints and the local attempts.
		// Their failures are those the receiver's fake returned, which the ladder's going on without a
		// lost attempt proves taken.
		locals := 0
		env.SetOnLocalActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { locals++ })
		env.ExecuteWorkflow(contract.EventWorkflowName, contract.EventParams{EventID: uuid.New(), RetrySchedule: defaultSchedule})
		if _, ok := contract.DroppedResult(env.GetWorkflowError()); !ok {
			t.Fatalf("version %d: workflow ended %v, want it dropped", version, env.GetWorkflowError())
		}
		if len(r.attempts) != 3 || len(r.lost) != 0 {
			t.Fatalf("version %d: %d attempts, %d lost", version, len(r.attempts), len(r.lost))
		}
		for _, a := range r.attempts {
			if a.in.ReportFailure != (version == AttemptFails || version == AttemptLocal) || a.in.HandOffFailure != (version >= AttemptRecorded) {
				t.Fatalf("version %d: attempt %d asked ReportFailure %v, HandOffFailure %v", version, a.in.Attempt, a.in.ReportFailure, a.in.HandOffFailure)
			}
		}
		want := map[workflow.Version][2]int{workflow.DefaultVersion: {0, 1}, AttemptFails: {3, 1}, AttemptLocal: {0, 4}, AttemptRecorded: {3, 4}}[version]
		if len(failed) != want[0] || locals != want[1] {
			t.Fatalf("version %d: failed activities %q, %d local ones; want %d and %d", version, failed, locals, want[0], want[1])
		}
		wantType := map[workflow.Version]string{AttemptFails: contract.ActivityDeliver, AttemptRecorded: contract.ActivityRecordFailed}[version]
		if len(failed) > 0 && !strings.HasPrefix(failed[0], wantType+": ") || len(failed) > 0 && !strings.Contains(failed[0], "attempt 1 failed: HTTP 500; next attempt at") {
			t.Fatalf("version %d: failure %q", version, failed[0])
		}
		if version < AttemptRecorded {
			continue
		}
		// Each failed attempt is handed on once, with what Deliver could not record.
		for i, f := range r.failed {
			if f.Attempt.DeliveryID != r.attempts[i].in.DeliveryID || f.Attempt.Attempt != i+1 || f.Result.Unrecorded == nil || f.Result.Unrecorded.Status != alwaysFail(f.Attempt).Outcome {
				t.Fatalf("version %d: RecordFailedAttempt %d given %+v for attempt %+v", version, i+1, f, r.attempts[i].in)
			}
		}
		if len(r.failed) != 3 {
			t.Fatalf("version %d: %d failed attempts handed on, want 3", version, len(r.failed))
		}
	}
}

// RecordFailedAttempt that cannot write the row (the database down) is run again by Temporal, with
// the outcome Deliver handed on, until it records it: no attempt is sent again or recorded lost, and
// the ladder goes on.
func TestAFailedAttemptsRecordIsRetriedUntilItIsWritten(t *testing.T) {
	r := &receiver{targets: []contract.Target{target(2)}, decide: alwaysFail, unrecorded: true, refuseRecords: 2}
	runEvent(t, r, defaultSchedule)
	if len(r.attempts) != 2 || len(r.lost) != 0 {
		t.Fatalf("%d attempts, %d lost; want 2 and none", len(r.attempts), len(r.lost))
	}
	var numbers []int
	for _, f := range r.failed {
		if f.Result.Unrecorded == nil {
			t.Fatalf("a retry of RecordFailedAttempt lost the outcome: %+v", f)
		}
		numbers = append(numbers, f.Attempt.Attempt)
	}
	if want := []int{1, 1, 1, 2}; !slices.Equal(numbers, want) {
		t.Fatalf("RecordFailedAttempt tasks by attempt %v, want %v", numbers, want)
	}
}

// A successful attempt costs no more under AttemptRecorded: it is one local activity, and no
// regular activity follows it.
func TestASuccessfulLocalAttemptRunsNoRegularActivity(t *testing.T) {
	r := &receiver{targets: []contract.Target{target(3)}, decide: func(contract.AttemptInput) contract.AttemptResult {
		return contract.AttemptResult{Outcome: models.StatusSucceeded}
	}}
	env := newEnv(t, r)
	regular := 0
	env.SetOnActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { regular++ })
	env.ExecuteWorkflow(contract.EventWorkflowName, contract.EventParams{EventID: uuid.New(), RetrySchedule: defaultSchedule})
	ended(t, env)
	if len(r.attempts) != 1 || !r.attempts[0].in.HandOffFailure || regular != 0 || len(r.failed) != 0 {
		t.Fatalf("%d attempts (%+v), %d regular activities, %d handed on", len(r.attempts), r.attempts, regular, len(r.failed))
	}
}

// A local attempt runs before the workflow task that made its delivery id completes: a worker killed
// in between must not leave the task's rerun a new id (the receiver would see the attempt twice under
// two ids). Since AttemptLocal every id a chain makes is the same on every run of its workflow.
func TestALocalChainsIdsAreTheSameOnEveryRun(t *testing.T) {
	tg := target(3)
	ids := func(p contract.RefireParams) []uuid.UUID {
		r := &receiver{targets: []contract.Target{tg}, decide: alwaysFail}
		env := newEnv(t, r)
		env.ExecuteWorkflow(contract.RefireWorkflowName, p)
		ended(t, env)
		var out []uuid.UUID
		for _, a := range r.attempts {
			out = append(out, a.in.DeliveryID)
		}
		return out
	}
	p := contract.RefireParams{EventID: uuid.New(), EndpointID: tg.EndpointID, ChainID: uuid.New(), RetrySchedule: defaultSchedule}
	first, again := ids(p), ids(p)
	if len(first) != 3 || !slices.Equal(first, again) || first[0] == first[1] {
		t.Fatalf("delivery ids %v, then %v: want three, the same on both runs", first, again)
	}
}

// An attempt's timeout leaves the POST its whole limit, and the attempt, a local activity within its
// workflow's task, ends before the SDK would complete that task early.
func TestAnAttemptFitsInItsWorkflowTask(t *testing.T) {
	if contract.AttemptTimeout < egress.Timeout+10*time.Second {
		t.Errorf("an attempt's %v leaves the %v POST under 10 s for its statements", contract.AttemptTimeout, egress.Timeout)
	}
	if contract.AttemptTimeout >= contract.EarlyTaskCompletion {
		t.Errorf("an attempt's %v runs to the %v at which the SDK completes its workflow task early", contract.AttemptTimeout, contract.EarlyTaskCompletion)
	}
}
