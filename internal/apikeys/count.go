package apikeys

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// LiveCounts are how many of an org's keys are not revoked, by kind.
type LiveCounts struct {
	ReadKeys, IntegrationKeys int64
}

// CountLive counts the org's keys that are not revoked, for the console's overview.
func (s *Service) CountLive(ctx context.Context, orgID uuid.UUID) (LiveCounts, error) {
	var n LiveCounts
	err := s.db.WithContext(ctx).Raw(`SELECT
		(SELECT count(*) FROM read_keys WHERE org_id = @o AND revoked_at IS NULL) AS read_keys,
		(SELECT count(*) FROM integration_keys WHERE org_id = @o AND revoked_at IS NULL) AS integration_keys`,
		map[string]any{"o": orgID}).Find(&n).Error
	if err != nil {
		return LiveCounts{}, fmt.Errorf("count keys: %w", err)
	}
	return n, nil
}
