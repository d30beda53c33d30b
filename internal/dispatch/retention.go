package dispatch

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"wds/internal/platform/database"
)

// PruneQueued deletes the chains queued by hand or by a recovery (webhook_dispatches) that were
// queued before cutoff and have been started, batch rows a statement, and counts them. One not yet
// started stays, however old, until the relay starts it.
func PruneQueued(ctx context.Context, db *gorm.DB, cutoff time.Time, batch int) (int64, error) {
	n, err := database.InBatches(ctx, db, batch, `DELETE FROM webhook_dispatches WHERE id IN (
		SELECT id FROM webhook_dispatches WHERE created_at < ? AND dispatched_at IS NOT NULL
		ORDER BY created_at LIMIT ?)`, cutoff, batch)
	if err != nil {
		return n, fmt.Errorf("prune queued chains: %w", err)
	}
	return n, nil
}
