// The org's delivery log across every endpoint, which the Operator API's list and the console's
// pages read.

package deliverylog

import (
	"context"
	"slices"

	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// ListOrgDeliveries pages through every attempt of every endpoint of the org, newest first, filtered
// (LogPage: each filter reads an index of its own); the filter's OrgID is the query's. Any member may read it, as they may
// read an endpoint's log.
func (s *Service) ListOrgDeliveries(ctx context.Context, q paging.OrgQuery, f LogFilter) (paging.Page[LogRow], error) {
	if f.Status != "" && !slices.Contains(models.Recorded, f.Status) {
		return paging.Page[LogRow]{}, problem.Fail(paging.ErrInvalidParameter, "status must be succeeded, failed or dropped")
	}
	if err := workspace.RequireRole(ctx, s.db, q.OrgID, q.ActorID, workspace.Anyone...); err != nil {
		return paging.Page[LogRow]{}, err
	}
	done, err := s.reads.Take(ctx, q.OrgID.String(), paging.ReadsPaced)
	if err != nil {
		return paging.Page[LogRow]{}, err
	}
	defer done()
	f.OrgID = q.OrgID
	rows, next, err := LogPage(ctx, s.db, f, q.Limit, q.Cursor)
	if err != nil {
		return paging.Page[LogRow]{}, err
	}
	return paging.Page[LogRow]{Rows: rows, NextCursor: next}, nil
}
