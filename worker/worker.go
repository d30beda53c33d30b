// Package worker is the webhook engine of `wds worker` (and `wds dev`): the Temporal worker on task
// queue wds-webhooks (and wds-webhooks-manual for re-fires, resends and recoveries, with slots of
// their own) with the workflows and activities registered under their history names, the loop that
// runs the outbox relay of internal/dispatch's Starter (whatever could not start after its commit),
// and the pruning of old rows.
package worker

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"wds/activities"
	"wds/internal/dispatch"
	"wds/internal/platform/metrics"
	"wds/workflows"
	"wds/workflows/contract"
)

// Options configure one worker process.
type Options struct {
	Temporal   client.Client
	Activities *activities.Activities
	Starter    *dispatch.Starter
	Log        logrus.FieldLogger
	// RelayInterval is how often the relay looks for undispatched rows when it found none.
	RelayInterval time.Duration
	// RelayBatch is how many rows one relay transaction claims.
	RelayBatch int
	// Retention is how long events and delivery rows are kept; 0 keeps them forever.
	Retention time.Duration
	// MaxConcurrentActivities bounds the activities, and apart the local activities, the worker runs
	// at once; 0 is the SDK's default.
	MaxConcurrentActivities int
	// ListenURL is where the worker listens for the resends the CLI announces (DispatchNotifier);
	// empty leaves them to the relay.
	ListenURL string
	// Deployment is the Worker Deployment Version the worker runs as, and when it makes it current.
	Deployment Deployment
	// ManualSlots bounds the activities and workflow tasks of re-fires, resends and recoveries
	// (contract.ManualTaskQueue) the worker runs at once: WDS_MANUAL_ACTIVITIES; 0 is
	// DefaultManualSlots.
	ManualSlots int
}

// DefaultManualSlots is how many manual chains' tasks a worker runs at once unless told otherwise:
// enough for a recovery at 10 chains a second against a receiver that answers within a second.
const DefaultManualSlots = 8

// pruneEvery is how often the worker prunes what is older than its retention.
const pruneEvery = time.Hour

// taskQueuePartitions is Temporal's default number of partitions per task queue.
const taskQueuePartitions = 4

// stickyCacheSize is how many workflow executions the worker keeps in memory between their tasks.
// The SDK's default, 10,000, keeps every chain waiting on a retry timer: each holds three parked
// coroutines and its state, about 60 kB, so 10,000 waiting chains took the worker to 648 MB
// (docs/benchmarks.md). A chain's history is a few dozen events: one evicted from the cache is
// replayed from it when its timer fires, which costs a little CPU then and nothing while it waits.
// 500 keeps the worker near 100 MB however many chains wait.
const stickyCacheSize = 500

// slowTaskWarning is the environment variable of the SDK's threshold for its "[TMPRL1104] Workflow
// task duration exceeded" warning, 5 s unless set. An attempt runs within its workflow's task and may
// take its receiver's whole 10 s, so at the default every slow receiver would log a worker warning.
const slowTaskWarning = "TEMPORAL_WORKFLOW_TASK_DURATION_WARN_SECONDS"

// warnOnlyNearTaskTimeout sets the SDK's slow-task warning, unless the operator did, to where the SDK
// would complete a delivery's task early (contract.EarlyTaskCompletion): a task that slow is news.
// The SDK reads the variable once, when a first task completes, so this runs before the worker starts.
func warnOnlyNearTaskTimeout() {
	if _, set := os.LookupEnv(slowTaskWarning); !set {
		_ = os.Setenv(slowTaskWarning, strconv.Itoa(int(contract.EarlyTaskCompletion/time.Second)))
	}
}

// Serve serves workflows and activities and runs the relay until ctx ends, then stops both: in-flight
// activities finish (up to the worker's stop timeout) and the relay's transaction completes.
func Serve(ctx context.Context, o Options) error {
	if o.RelayInterval == 0 {
		o.RelayInterval = 500 * time.Millisecond
	}
	if o.RelayBatch == 0 {
		o.RelayBatch = 100
	}
	if err := o.Deployment.check(); err != nil {
		return err
	}
	// Process-wide, and read when the first worker is created: set before it.
	sdkworker.SetStickyWorkflowCacheSize(stickyCacheSize)
	warnOnlyNearTaskTimeout()
	w := sdkworker.New(o.Temporal, contract.TaskQueue, sdkworker.Options{
		WorkerStopTimeout: 15 * time.Second,
		// A cluster splits a task queue into four partitions by default; with the SDK's two pollers a
		// task can wait a full long poll (60 s) on a partition nobody polls. Poll them all.
		MaxConcurrentWorkflowTaskPollers:   taskQueuePartitions,
		MaxConcurrentActivityTaskPollers:   taskQueuePartitions,
		MaxConcurrentActivityExecutionSize: o.MaxConcurrentActivities,
		// Attempts are local activities (workflows.AttemptLocal): the same bound applies to them.
		MaxConcurrentLocalActivityExecutionSize: o.MaxConcurrentActivities,
		DeploymentOptions:                       o.Deployment.options(),
	})
	Register(w, o.Activities)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start Temporal worker: %w", err)
	}
	manual := manualWorker(o)
	if err := manual.Start(); err != nil {
		w.Stop()
		return fmt.Errorf("start Temporal worker for %s: %w", contract.ManualTaskQueue, err)
	}
	o.Log.WithFields(logrus.Fields{"task_queue": contract.TaskQueue, "manual_task_queue": contract.ManualTaskQueue,
		"deployment": o.Deployment.Name, "build_id": o.Deployment.BuildID, "promote_version": o.Deployment.Promote}).Info("webhook worker started")
	pruned, listened, promoted := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { prune(ctx, o); close(pruned) }()
	go func() { promote(ctx, o.Temporal, o.Deployment, o.Log); close(promoted) }()
	go func() {
		if o.ListenURL != "" {
			dispatch.ListenDispatches(ctx, o.ListenURL, o.Starter, o.Log)
		}
		close(listened)
	}()
	relay(ctx, o)
	<-pruned
	<-listened
	<-promoted
	manual.Stop()
	w.Stop()
	o.Log.Info("webhook worker stopped")
	return nil
}

// manualWorker serves re-fires, resends and recoveries on their own task queue with slots of their
// own: fresh deliveries, on contract.TaskQueue, keep every slot of theirs however many manual chains
// are queued (docs/support.md, "Live traffic first").
func manualWorker(o Options) sdkworker.Worker {
	slots := o.ManualSlots
	if slots <= 0 {
		slots = DefaultManualSlots
	}
	w := sdkworker.New(o.Temporal, contract.ManualTaskQueue, sdkworker.Options{
		WorkerStopTimeout:                       15 * time.Second,
		MaxConcurrentWorkflowTaskPollers:        taskQueuePartitions,
		MaxConcurrentActivityTaskPollers:        taskQueuePartitions,
		MaxConcurrentActivityExecutionSize:      slots,
		MaxConcurrentWorkflowTaskExecutionSize:  max(slots, 2), // the SDK's least
		MaxConcurrentLocalActivityExecutionSize: slots,
		DeploymentOptions:                       o.Deployment.options(),
	})
	Register(w, o.Activities)
	return w
}

// Register adds the delivery workflows and activities to a worker.
func Register(w sdkworker.Registry, a *activities.Activities) {
	RegisterWorkflows(w)
	a.Register(w)
}

// RegisterWorkflows adds the delivery workflows under their stable names (also to a replayer), each
// with its versioning behaviour (docs/production.md, Deploys). A delivery chain is pinned: it ends
// on the version that started it, so no release ever replays another's delivery history, at the
// price of keeping a version's workers until its chains end (two days at most: max_attempts 10
// waits 40 h). A recovery only starts chains, one batch a second, with the same two steps in every
// release: it moves to the current version at its next task, so it never keeps an old version alive.
func RegisterWorkflows(w sdkworker.WorkflowRegistry) {
	pinned := func(fn any, name string) {
		w.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name, VersioningBehavior: workflow.VersioningBehaviorPinned})
	}
	pinned(workflows.EventWorkflow, contract.EventWorkflowName)
	pinned(workflows.EventWorkflow, contract.PlannedEventWorkflowName)
	pinned(workflows.RefireWorkflow, contract.RefireWorkflowName)
	pinned(workflows.TestWorkflow, contract.TestWorkflowName)
	w.RegisterWorkflowWithOptions(workflows.RecoveryWorkflow, workflow.RegisterOptions{Name: contract.RecoveryWorkflowName,
		VersioningBehavior: workflow.VersioningBehaviorAutoUpgrade})
}

// prune deletes events and delivery rows older than the retention (none when it is 0) and clears
// expired previous secrets, at start and then hourly, until ctx ends. Several workers may prune at
// once: each batch is its own statement and skips rows another is deleting.
func prune(ctx context.Context, o Options) {
	for {
		// Retention 0 keeps every row, but previous secrets whose grace ended are still cleared.
		var cutoff time.Time
		if o.Retention > 0 {
			cutoff = time.Now().Add(-o.Retention)
		}
		p, err := Prune(ctx, o.Starter.DB, cutoff, 1000)
		if err != nil && ctx.Err() == nil {
			o.Log.WithError(err).Warn("cannot prune old events and deliveries; will retry")
		} else if p != (Pruned{}) {
			o.Log.WithFields(logrus.Fields{"deliveries": p.Deliveries, "dispatches": p.Dispatches, "events": p.Events, "secrets": p.Secrets, "expired": p.Expired}).
				Info("pruned events and deliveries older than the retention")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pruneEvery):
		}
	}
}

// relay starts undispatched rows until ctx ends: full batches are followed at once by the next, an
// empty pass waits RelayInterval, and a failure (Temporal or the database away) backs off up to 10 s.
// Errors are logged when they begin and when they end, not on every pass.
func relay(ctx context.Context, o Options) {
	wait, failing := o.RelayInterval, false
	for {
		// A pass is not cut short by shutdown: it finishes its transaction, then the loop ends.
		n, err := o.Starter.RelayOnce(context.WithoutCancel(ctx), o.RelayBatch)
		metrics.RelayPass(n, err != nil, err == nil && failing)
		switch {
		case err != nil:
			if !failing {
				o.Log.WithError(err).Warn("outbox relay cannot start workflows; retrying")
			}
			failing, wait = true, min(wait*2, 10*time.Second)
		case err == nil:
			if failing {
				o.Log.Info("outbox relay recovered")
			}
			failing, wait = false, o.RelayInterval
			if n > 0 {
				o.Log.WithField("started", n).Debug("outbox relay started workflows")
			}
		}
		if n >= o.RelayBatch && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
