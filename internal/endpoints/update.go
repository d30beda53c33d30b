package endpoints

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/egress"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// UpdateInput is an edit of an endpoint: only the fields Set change. RateLimit and Headers may be
// Null, which clears them; Headers replaces the whole set.
type UpdateInput struct {
	ID          uuid.UUID
	ActorID     uuid.UUID
	URL         models.Optional[string]
	EventTypes  models.Optional[[]string]
	MaxAttempts models.Optional[int]
	RateLimit   models.Optional[int]
	Headers     models.Optional[map[string]string]
	// Description null or blank clears it.
	Description models.Optional[string]
}

// Update edits an endpoint's url, description, event types, max attempts, rate limit and headers. Chains already
// running keep the ladder they started with; every attempt from now on sends to the new URL with the
// new headers, paced by the new rate limit. The URL is checked as at creation.
func (s *Service) Update(ctx context.Context, in UpdateInput) (*models.Endpoint, error) {
	// The role comes first, as at creation: a member learns that they may not, not what a host
	// resolves to. mutate checks it again under the row lock.
	if _, err := s.managed(ctx, in.ID, in.ActorID); err != nil {
		return nil, err
	}
	cols, details, err := s.updateColumns(ctx, in)
	if err != nil {
		return nil, err
	}
	return s.mutate(ctx, in.ID, in.ActorID, "webhook_endpoint.update", func(tx *gorm.DB, ep *models.Endpoint) (map[string]any, error) {
		if len(cols) == 0 {
			return details, nil
		}
		if err := tx.Model(ep).Updates(cols).Error; err != nil {
			return nil, fmt.Errorf("update endpoint: %w", err)
		}
		// Read back what was stored, so the answer is the row as every other view shows it.
		if err := tx.Where("id = ?", ep.ID).Take(ep).Error; err != nil {
			return nil, fmt.Errorf("reload endpoint: %w", err)
		}
		return details, nil
	})
}

// updateColumns validates the edit and returns the columns it sets and the audit details (header
// names only: values may be credentials).
func (s *Service) updateColumns(ctx context.Context, in UpdateInput) (map[string]any, map[string]any, error) {
	cols, details := map[string]any{}, map[string]any{}
	if in.URL.Set {
		u, err := s.checkURL(ctx, in.URL.Value)
		if err != nil {
			return nil, nil, err
		}
		cols["url"], details["url"] = u, egress.RedactURL(u)
	}
	if in.EventTypes.Set {
		types, err := validTypes(in.EventTypes.Value)
		if err != nil {
			return nil, nil, err
		}
		cols["event_types"], details["event_types"] = types, []string(types)
	}
	if in.MaxAttempts.Set {
		if in.MaxAttempts.Null || in.MaxAttempts.Value < 1 || in.MaxAttempts.Value > 10 {
			return nil, nil, problem.Fail(problem.Invalid, "max_attempts must be from 1 to 10")
		}
		cols["max_attempts"], details["max_attempts"] = in.MaxAttempts.Value, in.MaxAttempts.Value
	}
	if in.RateLimit.Set {
		var limit *int
		if !in.RateLimit.Null {
			limit = &in.RateLimit.Value
		}
		if err := validRateLimit(limit); err != nil {
			return nil, nil, err
		}
		cols["rate_limit"], details["rate_limit"] = limit, limit
	}
	if in.Description.Set {
		d, err := validDescription(in.Description.Value) // null is blank: none
		if err != nil {
			return nil, nil, err
		}
		cols["description"], details["description"] = d, d
	}
	if in.Headers.Set {
		h, err := validHeaders(in.Headers.Value) // null is the empty set
		if err != nil {
			return nil, nil, err
		}
		names, sealed, err := models.SealHeaders(s.Box, h)
		if err != nil {
			return nil, nil, err
		}
		cols["headers"], cols["headers_sealed"], details["header_names"] = names, sealed, headerNames(h)
	}
	return cols, details, nil
}

// headerNames lists a header set's names, sorted, for audit rows.
func headerNames(h models.Headers) []string {
	out := make([]string, 0, len(h))
	for name := range h {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// managed loads a live endpoint the actor may manage; to an actor outside its org it does not exist.
func (s *Service) managed(ctx context.Context, id, actorID uuid.UUID) (*models.Endpoint, error) {
	var ep models.Endpoint
	err := s.DB.WithContext(ctx).Where("id = ? AND deleted_at IS NULL", id).Take(&ep).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, problem.Fail(problem.NotFound, "endpoint %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load endpoint: %w", err)
	}
	if err := workspace.RequireRowRole(ctx, s.DB, ep.OrgID, actorID, "endpoint", id, workspace.Managers...); err != nil {
		return nil, err
	}
	return &ep, nil
}
