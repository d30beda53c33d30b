package worker

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"wds/internal/delivery"
	"wds/internal/dispatch"
	"wds/internal/endpoints"
	"wds/internal/outbox"
)

// MinRetention is the shortest retention Prune accepts: far longer than any chain's ladder (ten
// attempts span about 50 hours), so no running workflow loses the event body or the rows it writes.
const MinRetention = 7 * 24 * time.Hour

// Pruned counts what one Prune deleted.
type Pruned struct {
	Deliveries int64 `json:"deliveries"`
	Dispatches int64 `json:"dispatches"`
	Events     int64 `json:"events"`
	// Secrets counts previous signing secrets cleared because their rotation's grace had ended.
	Secrets int64 `json:"secrets"`
	// Expired counts endpoints deleted because their lease (endpoints.LeaseTTL) had ended.
	Expired int64 `json:"expired"`
}

// Prune deletes delivery rows attempted before cutoff, started re-fire and test dispatches queued
// before it, and events created before it that nothing refers to any more (no delivery row, no
// dispatch): the log and the outbox would otherwise grow forever. It also clears previous signing
// secrets whose rotation's grace has ended, deletes endpoints whose lease has ended and the
// endpoints' attempt counts of minutes older than the 8 days the overview reads, whatever the cutoff,
// and folds those older than the health's day into hours. Each table's owner
// writes its own statement; the order matters, since attempts and queued chains hold their events.
func Prune(ctx context.Context, db *gorm.DB, cutoff time.Time, batch int) (Pruned, error) {
	var p Pruned
	var err error
	if p.Deliveries, err = delivery.PruneAttempts(ctx, db, cutoff, batch); err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	if p.Dispatches, err = dispatch.PruneQueued(ctx, db, cutoff, batch); err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	if p.Events, err = outbox.Prune(ctx, db, cutoff, batch); err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	if p.Secrets, err = endpoints.ClearEndedGraces(ctx, db); err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	if _, err = delivery.PruneMinutes(ctx, db); err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	if _, err = delivery.FoldMinutes(ctx, db); err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	if p.Expired, err = endpoints.ExpireLeases(ctx, db); err != nil {
		return p, fmt.Errorf("prune: expire leased endpoints: %w", err)
	}
	return p, nil
}
