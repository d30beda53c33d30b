package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
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

// maxBatch caps one batch's chains, so a fast rate limit still commits in small steps.
const maxBatch = 100

// RecoverBatch queues the next chains of a running recovery, in one transaction under the
// recovery's row lock (a cancel waits for it, and once committed no batch starts another chain),
// then starts them. A task run again after a crash finds the chains it queued already re-fired and
// takes the next ones; those it queued but did not start the relay starts. It ends the recovery
// when nothing is left, or when the endpoint is disabled or deleted.
func (a *Activities) RecoverBatch(ctx context.Context, p RecoveryParams) (RecoveryBatch, error) {
	var out RecoveryBatch
	var queued []uuid.UUID
	err := a.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rec Recovery
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", p.RecoveryID).Take(&rec).Error; err != nil {
			return fmt.Errorf("load recovery: %w", err)
		}
		var ep Endpoint
		if err := tx.Where("id = ?", rec.EndpointID).Take(&ep).Error; err != nil {
			return fmt.Errorf("load endpoint: %w", err)
		}
		out = RecoveryBatch{Status: rec.Status, EndpointURL: redactURL(ep.URL), Total: rec.Total, Started: rec.Started, Wait: time.Second}
		switch {
		case rec.Status != RecoveryRunning:
			out.Done = true
			return nil
		case !ep.Enabled || ep.DeletedAt != nil:
			// Chains started now would stop without sending: the recovery ends here.
			out.Done, out.Status = true, RecoveryCancelled
			return finishRecovery(ctx, tx, &rec, RecoveryCancelled)
		}
		rate := DefaultRecoveryRate
		if ep.RateLimit != nil {
			rate = *ep.RateLimit
		}
		n := min(rate, maxBatch)
		var err error
		if queued, err = queueRecovered(ctx, tx, &rec, n); err != nil {
			return err
		}
		out.Started += len(queued)
		if len(queued) > 0 {
			out.Wait = time.Duration(len(queued)) * time.Second / time.Duration(rate)
			return tx.Exec("UPDATE webhook_recoveries SET started = started + ? WHERE id = ?", len(queued), rec.ID).Error
		}
		// Nothing was free to take: done, unless a hand re-fire holds a chain's row right now.
		left, err := countRecoverable(ctx, tx, rec.EndpointID, rec.Since, rec.Until)
		if err != nil || left > 0 {
			return err
		}
		out.Done, out.Status = true, RecoveryCompleted
		return finishRecovery(ctx, tx, &rec, RecoveryCompleted)
	})
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

// queueRecovered queues up to n of the recovery's chains, oldest drop first. A chain's dropped row
// is locked as a hand re-fire locks it, skipping one a re-fire holds, and the unique re-fire of the
// row is the final word: a chain re-fired by hand meanwhile is not queued again.
func queueRecovered(ctx context.Context, tx *gorm.DB, rec *Recovery, n int) ([]uuid.UUID, error) {
	var rows []struct {
		ID      uuid.UUID
		EventID uuid.UUID
	}
	args := recoverableArgs(rec.EndpointID, rec.Since, rec.Until)
	args["n"] = n
	err := tx.WithContext(ctx).Raw("SELECT d.id, d.event_id "+recoverableSQL+" ORDER BY d.attempted_at, d.id LIMIT @n FOR UPDATE OF d SKIP LOCKED",
		args).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find dropped chains: %w", err)
	}
	var queued []uuid.UUID
	for _, r := range rows {
		var num int
		err := tx.WithContext(ctx).Raw(`INSERT INTO webhook_refire_counters (event_id, endpoint_id, n) VALUES (?, ?, 1)
			ON CONFLICT (event_id, endpoint_id) DO UPDATE SET n = webhook_refire_counters.n + 1 RETURNING n`,
			r.EventID, rec.EndpointID).Row().Scan(&num)
		if err != nil {
			return nil, fmt.Errorf("count manual starts: %w", err)
		}
		var ids []uuid.UUID
		err = tx.WithContext(ctx).Raw(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id,
				refired_delivery_id, recovery_id, created_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (refired_delivery_id) WHERE refired_delivery_id IS NOT NULL DO NOTHING RETURNING id`,
			uuid.New(), rec.OrgID, DispatchRecovery, manualWorkflowID(DispatchRecovery, r.EventID, rec.EndpointID, num),
			r.EventID, rec.EndpointID, uuid.New(), r.ID, rec.ID, rec.CreatedBy).Scan(&ids).Error
		if err != nil {
			return nil, fmt.Errorf("queue recovered chain: %w", err)
		}
		queued = append(queued, ids...)
	}
	return queued, nil
}
