package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"wds/workflows/contract"
)

// batchesPerRun bounds a run's history: after this many batches the workflow continues as new.
const batchesPerRun = 500

// RecoveryWorkflow starts a recovery's chains batch by batch, each batch one second's worth at the
// endpoint's rate (or DefaultRecoveryRate), waiting between batches on a durable timer. Progress is in
// the database, written by the batch that makes it, so a restarted worker resumes with the next
// batch; the current details name the endpoint and the counts for the Temporal UI.
func RecoveryWorkflow(ctx workflow.Context, p contract.RecoveryParams) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// A batch is one short transaction: a worker killed during one is noticed, and the batch
		// run again elsewhere, within seconds.
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: 30 * time.Second},
		Summary:             "start the next chains",
	})
	for range batchesPerRun {
		var b contract.RecoveryBatch
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
	return workflow.NewContinueAsNewError(ctx, contract.RecoveryWorkflowName, p)
}
