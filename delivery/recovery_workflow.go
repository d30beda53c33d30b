package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Recovery workflow and activity names, stable because running workflows are bound to them.
const (
	RecoveryWorkflowName = "WebhookRecovery"
	ActivityRecoverBatch = "RecoverBatch"
)

// RecoveryParams starts a recovery's workflow.
type RecoveryParams struct {
	RecoveryID uuid.UUID
}

// RecoveryBatch is what one batch did: the recovery's progress, and how long the workflow waits
// before the next batch so the starts keep to the pace. Done ends the workflow.
type RecoveryBatch struct {
	Status      string
	EndpointURL string
	Total       int
	Started     int
	Wait        time.Duration
	Done        bool
}

// batchesPerRun bounds a run's history: after this many batches the workflow continues as new.
const batchesPerRun = 500

// RecoveryWorkflow starts a recovery's chains batch by batch, each batch one second's worth at the
// endpoint's rate (or DefaultRecoveryRate), waiting between batches on a durable timer. Progress is in
// the database, written by the batch that makes it, so a restarted worker resumes with the next
// batch; the current details name the endpoint and the counts for the Temporal UI.
func RecoveryWorkflow(ctx workflow.Context, p RecoveryParams) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// A batch is one short transaction: a worker killed during one is noticed, and the batch
		// run again elsewhere, within seconds.
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: 30 * time.Second},
		Summary:             "start the next chains",
	})
	for range batchesPerRun {
		var b RecoveryBatch
		if err := workflow.ExecuteActivity(ctx, acts.RecoverBatch, p).Get(ctx, &b); err != nil {
			return err
		}
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("Recovery of %s: %d of %d chains started, %s", b.EndpointURL, b.Started, b.Total, b.Status))
		if b.Done {
			return nil
		}
		if err := workflow.Sleep(ctx, b.Wait); err != nil {
			return err
		}
	}
	return workflow.NewContinueAsNewError(ctx, RecoveryWorkflowName, p)
}

// RecoverBatch queues the next chains of a running recovery (NextRecoveryBatch), then starts them.
// A task run again after a crash finds the chains it queued already re-fired and takes the next
// ones; those it queued but did not start the relay starts.
func (a *Activities) RecoverBatch(ctx context.Context, p RecoveryParams) (RecoveryBatch, error) {
	out, queued, err := NextRecoveryBatch(ctx, a.DB, p)
	if err != nil {
		return RecoveryBatch{}, err
	}
	if a.Batches != nil && len(queued) > 0 {
		a.Batches.StartBatch(ctx, queued)
	}
	return out, nil
}

// BatchStarter starts the chains a recovery batch committed, within ctx; what it cannot start the
// worker's relay starts.
type BatchStarter interface {
	StartBatch(ctx context.Context, dispatchIDs []uuid.UUID)
}
