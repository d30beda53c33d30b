package workspace

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"
)

// Names names the ids that are the org's members (by email) or stores (by name), in one query; the
// others are left out. The console's audit log shows them.
func (s *Service) Names(ctx context.Context, org uuid.UUID, ids map[uuid.UUID]bool) (map[uuid.UUID]string, error) {
	names := map[uuid.UUID]string{}
	if len(ids) == 0 {
		return names, nil
	}
	var found []struct {
		ID   uuid.UUID
		Name string
	}
	err := s.db.WithContext(ctx).Raw(`
		SELECT u.id, u.email AS name FROM memberships m JOIN users u ON u.id = m.user_id
			WHERE m.org_id = @org AND m.user_id IN @ids
		UNION ALL SELECT id, name FROM stores WHERE org_id = @org AND id IN @ids`,
		map[string]any{"org": org, "ids": slices.Collect(maps.Keys(ids))}).Find(&found).Error
	if err != nil {
		return nil, fmt.Errorf("names of members and stores: %w", err)
	}
	for _, f := range found {
		names[f.ID] = f.Name
	}
	return names, nil
}
