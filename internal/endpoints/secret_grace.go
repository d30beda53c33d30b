package endpoints

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// ClearEndedGraces forgets each rotation's previous secret once its grace has ended, and counts the
// endpoints cleared. A previous secret signs nothing after previous_secret_until (the delivery reads
// it only before then); a sealed copy kept beyond that would only outlive its use.
func ClearEndedGraces(ctx context.Context, db *gorm.DB) (int64, error) {
	r := db.WithContext(ctx).Exec(`UPDATE webhook_endpoints SET previous_secret_sealed = NULL, previous_secret_until = NULL
		WHERE previous_secret_until <= clock_timestamp()`)
	if r.Error != nil {
		return 0, fmt.Errorf("clear previous secrets: %w", r.Error)
	}
	return r.RowsAffected, nil
}
