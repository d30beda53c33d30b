package outbox

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"wds/internal/platform/database"
)

// Prune deletes events created before cutoff that were started and that nothing refers to any more
// (no attempt row, no queued chain), batch rows a statement, and counts them; their re-fire counters
// go with them (ON DELETE CASCADE). Rows another pruner holds are skipped, so several workers may
// prune at once. Run it after the attempts and queued chains are pruned, which free the events. An
// event's state row goes with it (ON DELETE CASCADE).
func Prune(ctx context.Context, db *gorm.DB, cutoff time.Time, batch int) (int64, error) {
	n, err := database.InBatches(ctx, db, batch, `WITH doomed AS (
		SELECT e.id FROM events e JOIN event_states s ON s.event_id = e.id
		WHERE e.created_at < ? AND s.dispatched_at IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
			AND NOT EXISTS (SELECT 1 FROM webhook_dispatches q WHERE q.event_id = e.id)
		ORDER BY e.created_at LIMIT ? FOR UPDATE OF e SKIP LOCKED)
		DELETE FROM events WHERE id IN (SELECT id FROM doomed)`, cutoff, batch)
	if err != nil {
		return n, fmt.Errorf("prune events: %w", err)
	}
	return n, nil
}
