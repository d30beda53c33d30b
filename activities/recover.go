package activities

import (
	"context"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/workflows/contract"
)

// RecoverBatch queues the next chains of a running recovery (NextRecoveryBatch), then starts them.
// A task run again after a crash finds the chains it queued already re-fired and takes the next
// ones; those it queued but did not start the relay starts.
func (a *Activities) RecoverBatch(ctx context.Context, p contract.RecoveryParams) (contract.RecoveryBatch, error) {
	begin := time.Now()
	out, queued, err := delivery.NextRecoveryBatch(ctx, a.DB, p, a.RecoveryRate)
	if err != nil {
		return contract.RecoveryBatch{}, err
	}
	out.Took = time.Since(begin)
	if a.Batches != nil && len(queued) > 0 {
		// The starts are spread over the batch's wait, which the batch then takes whole, up to
		// maxSpread: the next batch is due when it returns, without a short timer (a timer of a few
		// milliseconds is a workflow task and a timer task more, and on a busy server fires late).
		// A longer wait (a share under one chain a second) is left to the workflow's durable timer,
		// well inside the activity's 10 s.
		spread := min(out.Wait, maxSpread)
		a.Batches.StartBatch(ctx, queued, spread)
		out.Wait -= spread
	}
	return out, nil
}

// maxSpread is the longest a batch spreads its starts over, holding its activity slot meanwhile.
const maxSpread = 2 * time.Second

// BatchStarter starts the chains a recovery batch committed, within ctx, spread over spread, and
// returns once spread has passed; what it cannot start the worker's relay starts.
type BatchStarter interface {
	StartBatch(ctx context.Context, dispatchIDs []uuid.UUID, spread time.Duration)
}
