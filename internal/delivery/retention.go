package delivery

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/models"
)

// PruneAttempts deletes attempt rows attempted before cutoff, batch rows a statement, and counts
// them. The log has no index on time alone (each filter's index leads with the org, migration
// 00033): each org's oldest rows of each status are one range of webhook_deliveries_org_status.
func PruneAttempts(ctx context.Context, db *gorm.DB, cutoff time.Time, batch int) (int64, error) {
	n, err := database.InBatches(ctx, db, batch, `DELETE FROM webhook_deliveries WHERE id IN (
		SELECT d.id FROM orgs o CROSS JOIN unnest(CAST(? AS text[])) s(status) CROSS JOIN LATERAL (
			SELECT x.id FROM webhook_deliveries x WHERE x.org_id = o.id AND x.status = s.status AND x.attempted_at < ?
			ORDER BY x.attempted_at LIMIT ?) d
		LIMIT ?)`, recorded(), cutoff, batch, batch)
	if err != nil {
		return n, fmt.Errorf("prune attempts: %w", err)
	}
	return n, nil
}

// recorded is the statuses a delivery row holds, as a PostgreSQL array literal.
func recorded() string {
	out := make([]string, len(models.Recorded))
	for i, st := range models.Recorded {
		out[i] = string(st)
	}
	return "{" + strings.Join(out, ",") + "}"
}
