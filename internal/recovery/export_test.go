package recovery

import (
	"context"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// SkippedSQL counts a window's drops a recovery skips, with its parameters, for the plan test.
func SkippedSQL(ctx context.Context, db *gorm.DB, endpointID uuid.UUID, since, until time.Time) (string, map[string]any, error) {
	args, err := countArgs(ctx, db, endpointID, since, until)
	return skippedSQL, args, err
}
