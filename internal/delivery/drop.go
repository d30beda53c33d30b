package delivery

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/models"
)

// DropPendingChains marks the last row of every chain of the endpoint that still has an attempt to
// come as dropped, so the delivery log is right the moment the endpoint is disabled, and returns the
// workflows running those chains. The workflows stop at the signal or, failing that, at their next
// attempt, without sending.
func DropPendingChains(ctx context.Context, tx *gorm.DB, endpointID uuid.UUID, reason string) ([]string, error) {
	return dropWaiting(ctx, tx, "endpoint_id", endpointID, reason)
}

// DropChain ends one chain if it waits for a next attempt: its failed last row becomes dropped with
// the reason.
func DropChain(ctx context.Context, tx *gorm.DB, chainID uuid.UUID, reason string) error {
	_, err := dropWaiting(ctx, tx, "chain_id", chainID, reason)
	return err
}

// dropWaiting ends the chains, among those whose column equals id, that wait for a next attempt:
// their failed last row becomes dropped with the reason, counted in the endpoint's health. It returns
// the workflows running them.
func dropWaiting(ctx context.Context, tx *gorm.DB, column string, id uuid.UUID, reason string) ([]string, error) {
	var workflowIDs []string
	err := tx.WithContext(ctx).Raw(dropWaitingSQL(column), models.StatusDropped, reason, id, models.StatusFailed).Find(&workflowIDs).Error
	if err != nil {
		return nil, fmt.Errorf("drop waiting deliveries: %w", err)
	}
	return workflowIDs, nil
}

// dropWaitingSQL drops the waiting chains whose column is the id bound: it reads only the rows that
// wait for a next attempt, through webhook_deliveries_pending for an endpoint's, or the chain's key.
func dropWaitingSQL(column string) string {
	return `WITH dropped AS (UPDATE webhook_deliveries SET status = ?, error = ?, next_attempt_at = NULL
		WHERE ` + column + ` = ? AND next_attempt_at IS NOT NULL AND status = ? RETURNING workflow_id, endpoint_id, attempted_at),
		` + countDroppedSQL + `
		SELECT workflow_id FROM dropped`
}
