package order

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/problem"
)

// IDByNumber finds an org's order by its number, what a customer quotes (numbers are per org). No
// such order is a not-found error that names the number.
func IDByNumber(ctx context.Context, db *gorm.DB, orgID uuid.UUID, number int64) (uuid.UUID, error) {
	var found []uuid.UUID
	if err := db.WithContext(ctx).Raw("SELECT id FROM orders WHERE org_id = ? AND number = ?", orgID, number).Scan(&found).Error; err != nil {
		return uuid.Nil, fmt.Errorf("find order %d: %w", number, err)
	}
	if len(found) == 0 {
		return uuid.Nil, problem.Fail(problem.NotFound, "no order %d in this org", number)
	}
	return found[0], nil
}
