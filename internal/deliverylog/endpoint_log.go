// One endpoint's delivery log, which the Operator API's named operation and `wds admin endpoint
// deliveries` page through.

package deliverylog

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// DeliveriesQuery is one page of an endpoint's delivery log, newest attempt first.
type DeliveriesQuery struct {
	EndpointID uuid.UUID
	// ActorID nil is the database's own operator (`wds admin`); otherwise a member of the org.
	ActorID *uuid.UUID
	Limit   int
	Cursor  *paging.Cursor
}

// DeliveriesPage is the list envelope.
type DeliveriesPage struct {
	Rows       []LogRow       `json:"rows"`
	NextCursor *paging.Cursor `json:"next_cursor"`
}

// ListDeliveries pages through an endpoint's attempts by (attempted_at DESC, id DESC) (LogPage).
// Deleted endpoints keep their log. An endpoint of an org the
// actor is not in is not found.
func (s *Service) ListDeliveries(ctx context.Context, q DeliveriesQuery) (*DeliveriesPage, error) {
	var ep models.Endpoint
	err := s.db.WithContext(ctx).Where("id = ?", q.EndpointID).Take(&ep).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, problem.Fail(problem.NotFound, "endpoint %s not found", q.EndpointID)
	}
	if err != nil {
		return nil, fmt.Errorf("load endpoint: %w", err)
	}
	if q.ActorID != nil {
		if err := workspace.RequireRowRole(ctx, s.db, ep.OrgID, *q.ActorID, "endpoint", q.EndpointID, workspace.Anyone...); err != nil {
			return nil, err
		}
	}
	done, err := s.reads.Take(ctx, ep.OrgID.String(), paging.ReadsPaced)
	if err != nil {
		return nil, err
	}
	defer done()
	rows, next, err := LogPage(ctx, s.db, LogFilter{EndpointID: &q.EndpointID}, q.Limit, q.Cursor)
	if err != nil {
		return nil, err
	}
	return &DeliveriesPage{Rows: rows, NextCursor: next}, nil
}
