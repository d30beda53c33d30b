package workflows

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"wds/activities"
	"wds/models"
	"wds/workflows/contract"
)

const (
	// infraPatience is how long an attempt waits out wds's own outage before it counts as lost.
	infraPatience = 24 * time.Hour
)

// beforeChains runs before an event's chains: nil in every build but the one the upgrade test builds
// with tag wdsothershape (othershape.go), a release whose histories this code cannot replay.
var beforeChains func(ctx workflow.Context) error

// EventWorkflow delivers one event to every endpoint subscribed when it fired, one chain per endpoint
// in parallel.
func EventWorkflow(ctx workflow.Context, p contract.EventParams) (contract.Result, error) {
	if beforeChains != nil {
		if err := beforeChains(ctx); err != nil {
			return contract.Result{}, err
		}
	}
	chains, err := eventChains(ctx, p)
	if err != nil {
		return contract.Result{}, err
	}
	return fanOut(ctx, chains)
}

// eventChains are the chains the starter planned or, when it planned none, those of the targets
// resolved now. The choice rests on the workflow's input, so the replay of a workflow
// of either kind follows the branch it first took.
func eventChains(ctx workflow.Context, p contract.EventParams) ([]chain, error) {
	if len(p.Chains) > 0 {
		chains := make([]chain, len(p.Chains))
		for i, c := range p.Chains {
			chains[i] = chain{target: c.Target, eventID: p.EventID, schedule: p.Ladder(),
				chainID: c.ChainID, firstDeliveryID: c.FirstDeliveryID, design: workflow.Version(p.Design)}
		}
		return chains, nil
	}
	targets, err := resolve(ctx, contract.ResolveInput{EventID: p.EventID})
	if err != nil {
		return nil, err
	}
	chains := make([]chain, len(targets))
	for i, t := range targets {
		chains[i] = chain{target: t, eventID: p.EventID, schedule: p.Ladder(), design: workflow.Version(p.Design)}
	}
	return chains, nil
}

// RefireWorkflow runs a fresh chain of one event to one endpoint, starting at attempt 1.
func RefireWorkflow(ctx workflow.Context, p contract.RefireParams) (contract.Result, error) {
	targets, err := resolve(ctx, contract.ResolveInput{EventID: p.EventID, EndpointID: &p.EndpointID})
	if err != nil {
		return contract.Result{}, err
	}
	chains := make([]chain, len(targets))
	for i, t := range targets {
		chains[i] = chain{target: t, eventID: p.EventID, schedule: p.Ladder(), chainID: p.ChainID, design: workflow.Version(p.Design)}
	}
	return fanOut(ctx, chains)
}

// TestWorkflow sends the synthetic webhook.test event once, under the delivery id already given to
// the caller: it answers "does my receiver work now", so it has no retries.
func TestWorkflow(ctx workflow.Context, p contract.TestParams) (contract.Result, error) {
	targets, err := resolve(ctx, contract.ResolveInput{EventID: p.EventID, EndpointID: &p.EndpointID})
	if err != nil {
		return contract.Result{}, err
	}
	chains := make([]chain, len(targets))
	for i, t := range targets {
		t.MaxAttempts = 1
		chains[i] = chain{target: t, eventID: p.EventID, chainID: p.ChainID, firstDeliveryID: p.DeliveryID, test: true,
			design: workflow.Version(p.Design)}
	}
	return fanOut(ctx, chains)
}

// acts names the activities the workflows schedule by typed method reference, so the compiler checks
// their inputs; the SDK derives each activity type from the method's name, which the worker
// registers. It stays nil: a workflow never runs an activity itself.
var acts *activities.Activities

func resolve(ctx workflow.Context, in contract.ResolveInput) ([]contract.Target, error) {
	// A local activity: one indexed query, run by the worker that runs the workflow, saves a round
	// trip through the server on the way to the first attempt. A local activity is run by the
	// function it is given, so it is named by its registered name rather than through acts.
	actx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: time.Minute},
		Summary:             "find subscribed endpoints",
	})
	var targets []contract.Target
	if err := workflow.ExecuteLocalActivity(actx, contract.ActivityResolveTargets, in).Get(ctx, &targets); err != nil {
		return nil, fmt.Errorf("resolve endpoints: %w", err)
	}
	return targets, nil
}

// fanOut runs every chain in parallel, publishes the outcome as WdsDeliveryStatus and returns it.
func fanOut(ctx workflow.Context, chains []chain) (contract.Result, error) {
	if err := publishEndpoints(ctx, chains); err != nil {
		return contract.Result{}, err
	}
	stopped := watchStops(ctx)
	outcomes := make([]models.Status, len(chains))
	errs := make([]error, len(chains))
	wg := workflow.NewWaitGroup(ctx)
	for i := range chains {
		chains[i].stopped = func() bool { return stopped[chains[i].target.EndpointID] }
		wg.Add(1)
		workflow.Go(ctx, func(gctx workflow.Context) {
			defer wg.Done()
			outcomes[i], errs[i] = chains[i].run(gctx)
		})
	}
	wg.Wait(ctx)
	for _, err := range errs {
		if err != nil {
			return contract.Result{}, err
		}
	}
	res := contract.Result{Status: summarize(outcomes), Chains: make([]contract.ChainResult, len(chains))}
	for i, c := range chains {
		res.Chains[i] = contract.ChainResult{EndpointID: c.target.EndpointID, URL: c.target.URL, Outcome: outcomes[i]}
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, contract.AttrDeliveryStatus.ValueSet(string(res.Status))); err != nil {
		return res, err
	}
	return res, droppedError(ctx, res, chains)
}

// VersionFailWhenDropped is the change that ends a workflow with a dropped chain as Failed. A
// workflow that completed with a dropped chain before it replays (a query) down its old path.
const VersionFailWhenDropped = "fail-when-dropped"

// droppedError fails a workflow that did not reach every endpoint, so the Temporal UI's workflow list
// shows it as Failed, naming the dropped endpoints, without a query. The error is non-retryable (a
// workflow has no retry policy anyway) and carries the whole Result as its details, every chain's
// outcome included; WdsDeliveryStatus is already set.
func droppedError(ctx workflow.Context, res contract.Result, chains []chain) error {
	if res.Status == contract.WorkflowSucceeded {
		return nil
	}
	if !chains[0].changed(ctx, VersionFailWhenDropped) {
		return nil
	}
	var names []string
	for _, c := range res.Chains {
		if c.Outcome == models.StatusDropped {
			names = append(names, c.EndpointID.String()+" ("+c.URL+")")
		}
	}
	msg := fmt.Sprintf("%s: dropped to %d of %d endpoints: %s", res.Status, len(names), len(res.Chains), strings.Join(names, ", "))
	return temporal.NewNonRetryableApplicationError(msg, contract.ErrTypeDropped, nil, res)
}

// publishEndpoints sets WdsEndpointIds and WdsDeliveryStatus delivering, unless the starter planned
// the chains and set them at start. The choice rests on the start event, so the replay of a workflow
// that updated them still does.
func publishEndpoints(ctx workflow.Context, chains []chain) error {
	if workflow.GetTypedSearchAttributes(ctx).ContainsKey(contract.AttrEndpointIDs) {
		return nil
	}
	ids := make([]string, len(chains))
	for i, c := range chains {
		ids[i] = c.target.EndpointID.String()
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, contract.AttrEndpointIDs.ValueSet(ids), contract.AttrDeliveryStatus.ValueSet(string(contract.WorkflowDelivering))); err != nil {
		return fmt.Errorf("search attributes: %w", err)
	}
	return nil
}

// watchStops records every endpoint named by an endpoint-stopped signal, for the chains to consult.
// Reading the map by key is deterministic; it is never iterated.
func watchStops(ctx workflow.Context) map[uuid.UUID]bool {
	stopped := map[uuid.UUID]bool{}
	ch := workflow.GetSignalChannel(ctx, contract.SignalEndpointStopped)
	workflow.Go(ctx, func(gctx workflow.Context) {
		for {
			var id uuid.UUID
			ch.Receive(gctx, &id)
			stopped[id] = true
		}
	})
	return stopped
}

// summarize folds chain outcomes into WdsDeliveryStatus. No subscribers is a success: nothing was lost.
func summarize(outcomes []models.Status) contract.WorkflowStatus {
	dropped := 0
	for _, o := range outcomes {
		if o == models.StatusDropped {
			dropped++
		}
	}
	switch {
	case dropped == 0:
		return contract.WorkflowSucceeded
	case dropped == len(outcomes):
		return contract.WorkflowDropped
	default:
		return contract.WorkflowPartiallyDropped
	}
}

// chain is one retry ladder of one event to one endpoint.
type chain struct {
	target   contract.Target
	eventID  uuid.UUID
	schedule []time.Duration
	// chainID is given for re-fires, tests and planned events, and made in the workflow otherwise.
	chainID uuid.UUID
	// firstDeliveryID is the announced id of a test delivery or the planned one of an event's chain.
	firstDeliveryID uuid.UUID
	test            bool
	// design is the version of ChangeAttempt the starter chose; zero asks workflow.GetVersion.
	design workflow.Version
	// stopped reports an endpoint-stopped signal for this chain's endpoint.
	stopped func() bool
}

// run makes attempts until one succeeds or the chain is dropped, and returns the final outcome.
// Attempt n is due at first + Offset(n), whatever time the earlier attempts took.
func (c chain) run(ctx workflow.Context) (models.Status, error) {
	version := c.attemptVersion(ctx)
	if c.chainID == uuid.Nil {
		c.chainID = c.newChainID(ctx, version)
	}
	first := workflow.Now(ctx)
	last := c.target.MaxAttempts
	failure := "" // what failed the previous attempt
	for attempt := 1; attempt <= last; attempt++ {
		if attempt > 1 {
			if err := c.sleepUntil(ctx, first.Add(Offset(c.schedule, attempt)), attempt, failure); err != nil {
				return "", err
			}
		}
		in := contract.AttemptInput{
			DeliveryID: c.deliveryID(ctx, attempt, version), EventID: c.eventID, EndpointID: c.target.EndpointID,
			ChainID: c.chainID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, Attempt: attempt, Test: c.test,
			ReportFailure: version >= AttemptFails && version < AttemptRecorded, HandOffFailure: version >= AttemptRecorded,
		}
		if attempt < last {
			next := first.Add(Offset(c.schedule, attempt+1))
			in.NextAttemptAt = &next
		}
		res, err := c.attempt(ctx, in, version >= AttemptLocal)
		if err == nil && version >= AttemptRecorded && res.ReceiverFailed() {
			res, err = c.recordFailed(ctx, in, res)
		}
		if err != nil {
			return "", err
		}
		if res.Outcome != models.StatusFailed {
			return res.Outcome, nil
		}
		failure = res.Error
	}
	// The last attempt's failure is recorded as dropped by the activity; reaching here means the
	// activity reported failed on the last attempt, which it never does.
	return models.StatusDropped, nil
}

// deliveryID is attempt's delivery id: the one the starter planned for attempt 1, or else one made
// in the workflow. A local attempt runs before the workflow task that made its id completes, and a
// worker killed in between leaves no record of a random id: the task's rerun would send under a new
// one. So since AttemptLocal the id derives from the chain's id and the attempt's number, the same
// on every run.
func (c chain) deliveryID(ctx workflow.Context, attempt int, version workflow.Version) uuid.UUID {
	switch {
	case attempt == 1 && c.firstDeliveryID != uuid.Nil:
		return c.firstDeliveryID
	case version >= AttemptLocal:
		return uuid.NewSHA1(c.chainID, []byte("attempt "+strconv.Itoa(attempt)))
	}
	return newID(ctx)
}

// newChainID makes the id of a chain the starter did not plan: since AttemptLocal derived from the
// workflow's run and the endpoint, the same on every run of the task (deliveryID says why).
func (c chain) newChainID(ctx workflow.Context, version workflow.Version) uuid.UUID {
	if version < AttemptLocal {
		return newID(ctx)
	}
	run := workflow.GetInfo(ctx).WorkflowExecution.RunID
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("wds:chain:"+run+":"+c.target.EndpointID.String()))
}

// sleepUntil waits for attempt's due time. The timer's summary names what failed the attempt before:
// the Temporal UI draws the timer as a bar that reads at a glance, where a failed local activity is
// marked failed only in its details.
func (c chain) sleepUntil(ctx workflow.Context, due time.Time, attempt int, failure string) error {
	d := due.Sub(workflow.Now(ctx))
	if d <= 0 {
		return nil // the previous attempt took longer than the gap: go at once
	}
	summary := fmt.Sprintf("retry %d of %d to %s after attempt %d failed: %s", attempt, c.target.MaxAttempts, c.target.URL, attempt-1, failure)
	// A stop signal ends the wait early; the attempt that follows finds the endpoint disabled or
	// deleted and ends the chain without sending.
	opts := workflow.AwaitOptions{Timeout: d, TimerOptions: workflow.TimerOptions{Summary: summary}}
	if _, err := workflow.AwaitWithOptions(ctx, opts, c.stopped); err != nil {
		return fmt.Errorf("wait for attempt %d: %w", attempt, err)
	}
	return nil
}

// attempt makes attempt n of the ladder, as a local activity when local. The ladder, not Temporal,
// decides about the receiver's failures, which the activity reports as outcomes (deliver).
// Otherwise the activity fails only when wds itself could not do the work (database down, worker
// lost): Temporal runs it again, so an outage never spends the receiver's attempts or drops a chain
// unsent. Should the outage outlast infraPatience, the attempt is recorded as lost, by an activity
// that retries until the log has it.
func (c chain) attempt(ctx workflow.Context, in contract.AttemptInput, local bool) (contract.AttemptResult, error) {
	actx := attemptContext(ctx, fmt.Sprintf("attempt %d of %d to %s", in.Attempt, c.target.MaxAttempts, c.target.URL), local)
	res, err := deliver(ctx, actx, in)
	for err == nil && res.Outcome == models.StatusHeld {
		// Held by the endpoint's rate limit: wait on a timer until the place the activity reserved
		// (a stop signal ends it early) and ask again with the same delivery id, in that place; the
		// wait is not an attempt, and however long the backlog it is one timer.
		//
		// One path serves every chain. A held result recorded before 72f7b51 carries no SlotAt, so
		// its chain replays asking again without a place, as it ran, and the activity takes a new
		// one (testdata/webhook-event-held-unreserved.json). A chain without a Design held since
		// then recorded a "held-reservation" version marker, which the Go SDK's replay skips now
		// that no GetVersion asks for it (testdata/webhook-event-held-reservation.json).
		opts := workflow.AwaitOptions{Timeout: res.Wait, TimerOptions: workflow.TimerOptions{
			Summary: fmt.Sprintf("attempt %d held by the rate limit of %s", in.Attempt, c.target.URL)}}
		if _, err := workflow.AwaitWithOptions(ctx, opts, c.stopped); err != nil {
			return contract.AttemptResult{}, fmt.Errorf("wait for the rate limit: %w", err)
		}
		in.SlotAt = res.SlotAt
		res, err = deliver(ctx, actx, in)
	}
	if err == nil {
		return res, nil
	}
	rctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: time.Minute},
		Summary:             fmt.Sprintf("record lost attempt %d", in.Attempt),
	})
	lost := contract.LostAttempt{Attempt: in, Error: "attempt_lost: " + err.Error()}
	if err := workflow.ExecuteActivity(rctx, acts.RecordLostAttempt, lost).Get(ctx, &res); err != nil {
		return contract.AttemptResult{}, fmt.Errorf("record attempt %d: %w", in.Attempt, err)
	}
	return res, nil
}

// recordFailed follows a local attempt the receiver failed with RecordFailedAttempt, a regular
// activity: the Temporal UI draws it failed, with the HTTP status and error, where it draws a failed
// local activity like a succeeded one. It writes the attempt's row if Deliver could not, retried by
// Temporal until it has, and fails with the attempt's outcome, which the ladder takes. A successful
// attempt, the common case, costs nothing more.
func (c chain) recordFailed(ctx workflow.Context, in contract.AttemptInput, res contract.AttemptResult) (contract.AttemptResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: time.Minute},
		Summary:             fmt.Sprintf("attempt %d of %d to %s failed", in.Attempt, c.target.MaxAttempts, c.target.URL),
	})
	err := workflow.ExecuteActivity(actx, acts.RecordFailedAttempt, contract.FailedAttemptInput{Attempt: in, Result: res}).Get(ctx, &res)
	if failed, ok := contract.FailedAttempt(err); ok {
		return failed, nil
	}
	if err != nil {
		return contract.AttemptResult{}, fmt.Errorf("record failed attempt %d: %w", in.Attempt, err)
	}
	return res, nil
}

// ChangeAttempt is the workflow.GetVersion change of how an attempt runs. One change id for every
// version, so a workflow records one marker however many versions there are. A chain that started
// before a version keeps its old way until it ends.
const ChangeAttempt = "attempt"

// The versions of ChangeAttempt.
const (
	// AttemptFails: an attempt the receiver failed is a failed activity (contract.AttemptFailure)
	// instead of a completed one with a failed outcome.
	AttemptFails workflow.Version = 1
	// AttemptLocal: the attempt is a local activity, run by the worker running the workflow task: one
	// marker in history instead of an activity's three events, and no activity task's round trip.
	AttemptLocal workflow.Version = 2
	// AttemptRecorded: a local attempt the receiver failed is followed by a regular activity,
	// RecordFailedAttempt, that records it if the local one could not and fails for the Temporal UI
	// (recordFailed).
	AttemptRecorded workflow.Version = contract.CurrentDesign
)

// attemptVersion is the way this chain's attempts run: the design its starter chose or, for a chain
// started before starters chose one, the version workflow.GetVersion recorded.
func (c chain) attemptVersion(ctx workflow.Context) workflow.Version {
	if c.design != 0 {
		return c.design
	}
	return workflow.GetVersion(ctx, ChangeAttempt, workflow.DefaultVersion, AttemptRecorded)
}

// changed reports whether the chain runs with change, a workflow.GetVersion change of one version.
// Every chain whose starter chose a design does, each change being older than the first design; a
// chain started before asks GetVersion, as it always did.
func (c chain) changed(ctx workflow.Context, change string) bool {
	return c.design != 0 || workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1) == 1
}

// localAttempt marks a context whose Deliver runs as a local activity (attemptContext).
type localAttempt struct{}

// attemptContext carries the Deliver activity's options, named by summary in the Temporal UI.
func attemptContext(ctx workflow.Context, summary string, local bool) workflow.Context {
	retry := &temporal.RetryPolicy{MaximumInterval: time.Minute}
	if local {
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: contract.AttemptTimeout,
			ScheduleToCloseTimeout: infraPatience, RetryPolicy: retry, Summary: summary})
		return workflow.WithValue(ctx, localAttempt{}, true)
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: contract.AttemptTimeout,
		ScheduleToCloseTimeout: infraPatience, RetryPolicy: retry, Summary: summary})
}

// deliver runs the Deliver activity and returns the attempt's outcome. The outcome of an attempt the
// receiver failed comes as the activity's failure, so the Temporal UI shows it failed, with the HTTP
// status and error; the ladder takes it as an outcome like any other.
func deliver(ctx, actx workflow.Context, in contract.AttemptInput) (contract.AttemptResult, error) {
	var res contract.AttemptResult
	run := workflow.ExecuteActivity
	if local, _ := actx.Value(localAttempt{}).(bool); local {
		// A local activity is run by the function it is given: named by its registered name.
		run = func(actx workflow.Context, _ any, args ...any) workflow.Future {
			return workflow.ExecuteLocalActivity(actx, contract.ActivityDeliver, args...)
		}
	}
	err := run(actx, acts.Deliver, in).Get(ctx, &res)
	if failed, ok := contract.FailedAttempt(err); ok {
		return failed, nil
	}
	return res, err
}

// newID makes a random UUID once and records it in history, so replays see the same id.
func newID(ctx workflow.Context) uuid.UUID {
	var id uuid.UUID
	_ = workflow.SideEffect(ctx, func(workflow.Context) any { return uuid.New() }).Get(&id)
	return id
}

// Offset is when attempt n (n >= 2) is due, relative to attempt 1: the n-1-th delay of the schedule,
// and past the schedule its last delay again for each further attempt (docs/webhooks.md: with the
// default 1m,5m,30m,2h,8h, attempt 7 comes 8 h after attempt 6).
func Offset(schedule []time.Duration, n int) time.Duration {
	i := n - 2
	if i < len(schedule) {
		return schedule[i]
	}
	last := schedule[len(schedule)-1]
	return last + time.Duration(i-len(schedule)+1)*last
}
