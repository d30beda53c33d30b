package endpoints

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"

	"wds/internal/platform/egress"
)

// CountEnabled is how many of the org's endpoints are enabled, for the console's overview.
func (s *Service) CountEnabled(ctx context.Context, orgID uuid.UUID) (int64, error) {
	var n int64
	err := s.DB.WithContext(ctx).Raw(`SELECT count(*) FROM webhook_endpoints WHERE org_id = ? AND enabled AND deleted_at IS NULL`,
		orgID).Find(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count endpoints: %w", err)
	}
	return n, nil
}

// RedactedURLs names the ids that are the org's endpoints, deleted ones too, by their URL redacted
// as the audit log writes it (egress.RedactURL); the others are left out. The console's audit log
// shows them.
func (s *Service) RedactedURLs(ctx context.Context, orgID uuid.UUID, ids map[uuid.UUID]bool) (map[uuid.UUID]string, error) {
	urls := map[uuid.UUID]string{}
	if len(ids) == 0 {
		return urls, nil
	}
	var found []struct {
		ID  uuid.UUID
		URL string
	}
	err := s.DB.WithContext(ctx).Raw(`SELECT id, url FROM webhook_endpoints WHERE org_id = ? AND id IN ?`,
		orgID, slices.Collect(maps.Keys(ids))).Find(&found).Error
	if err != nil {
		return nil, fmt.Errorf("endpoint urls: %w", err)
	}
	for _, f := range found {
		urls[f.ID] = egress.RedactURL(f.URL)
	}
	return urls, nil
}
