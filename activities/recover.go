package activities

import (
	"context"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/workflows/contract"
)

// RecoverBatch queues the next chains of a running recovery (NextRecoveryBatch), then starts them.
// A task run again after a crash finds the chains it queued already re-fired and takes the next
// ones; those it queued but did not start the relay starts.
func (a *Activities) RecoverBatch(ctx context.Context, p contract.RecoveryParams) (contract.RecoveryBatch, error) {
	out, queued, err := endpoints.NextRecoveryBatch(ctx, a.DB, p)
	if err != nil {
		return contract.RecoveryBatch{}, err
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
