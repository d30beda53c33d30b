package dispatch

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/outbox"
	"wds/models"
)

// Number is the next number of a chain of the event to the endpoint queued by hand or by a
// recovery. Resends, re-fires and recoveries share one counter per pair (webhook_refire_counters),
// so the workflow ids they number never collide; the upsert makes concurrent callers take turns.
func Number(ctx context.Context, tx *gorm.DB, eventID, endpointID uuid.UUID) (int, error) {
	var n int
	err := tx.WithContext(ctx).Raw(`INSERT INTO webhook_refire_counters (event_id, endpoint_id, n) VALUES (?, ?, 1)
		ON CONFLICT (event_id, endpoint_id) DO UPDATE SET n = webhook_refire_counters.n + 1 RETURNING n`,
		eventID, endpointID).Row().Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("number the chain: %w", err)
	}
	return n, nil
}

// Queue writes a chain for the after-commit start or the relay to start, inside the caller's
// transaction. A chain re-firing an attempt that another chain already re-fires is not written
// (each dropped attempt is re-fired at most once): Queue then reports false.
func Queue(ctx context.Context, tx *gorm.DB, d *models.Dispatch) (bool, error) {
	var ids []uuid.UUID
	err := tx.WithContext(ctx).Raw(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id,
			chain_id, delivery_id, refired_delivery_id, recovery_id, created_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (refired_delivery_id) WHERE refired_delivery_id IS NOT NULL DO NOTHING RETURNING id`,
		d.ID, d.OrgID, d.Kind, d.WorkflowID, d.EventID, d.EndpointID, d.ChainID, d.DeliveryID, d.RefiredDeliveryID,
		d.RecoveryID, d.CreatedBy).Scan(&ids).Error
	if err != nil {
		return false, fmt.Errorf("queue %s chain: %w", d.Kind, err)
	}
	return len(ids) == 1, nil
}

// queued is webhook_dispatches as the relay's queue (outbox.Queue says why its mark locks in id
// order).
var queued = outbox.Queue{
	Table: "webhook_dispatches",
	Mark: `UPDATE webhook_dispatches SET dispatched_at = clock_timestamp() WHERE id IN (
		SELECT id FROM webhook_dispatches WHERE id IN ? AND dispatched_at IS NULL ORDER BY id FOR NO KEY UPDATE)
		AND dispatched_at IS NULL`,
}
