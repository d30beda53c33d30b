package database

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// InBatches runs stmt, which deletes (or updates) at most batch rows, until a run touches fewer, and
// counts the rows. Each run is its own short statement, so a large backlog never holds many locks
// or one long transaction.
func InBatches(ctx context.Context, db *gorm.DB, batch int, stmt string, args ...any) (int64, error) {
	var n int64
	for {
		r := db.WithContext(ctx).Exec(stmt, args...)
		if r.Error != nil {
			return n, fmt.Errorf("in batches of %d: %w", batch, r.Error)
		}
		n += r.RowsAffected
		if r.RowsAffected < int64(batch) {
			return n, nil
		}
	}
}
