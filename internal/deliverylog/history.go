package deliverylog

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"wds/internal/platform/paging"
	"wds/internal/workspace"
)

// HourCount is what one endpoint's delivery log holds for one hour (UTC): its attempts by status,
// how many of its drops were re-fired since (by hand or by a recovery), and how many re-fired or
// recovered chains made their first attempt then.
type HourCount struct {
	Hour                                time.Time
	EndpointID                          uuid.UUID
	Succeeded, Failed, Dropped, Refired int64
	DroppedRefired                      int64
}

// DeliveryHistory counts the org's delivery attempts since a time, by hour and endpoint, for the
// console's charts. Any member may read it, as they may read the delivery log. It sums the minutes
// each attempt's write counted (models.EndpointMinute, kept 8 days): a cost of the window's minutes
// with attempts, never of how many attempts they hold, nor of other orgs' windows.
func (s *Service) DeliveryHistory(ctx context.Context, q paging.OrgQuery, since time.Time) ([]HourCount, error) {
	if err := workspace.RequireRole(ctx, s.db, q.OrgID, q.ActorID, workspace.Anyone...); err != nil {
		return nil, err
	}
	done, err := s.reads.Take(ctx, q.OrgID.String(), paging.ReadsPaced)
	if err != nil {
		return nil, err
	}
	defer done()
	sql, args := historySQL(q.OrgID, since)
	rows := []HourCount{}
	if err := s.db.WithContext(ctx).Raw(sql, args).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("delivery history: %w", err)
	}
	return rows, nil
}

// historySQL is DeliveryHistory's query: the org's minutes from since, one range of
// webhook_endpoint_minutes_org (deleted endpoints' too: their attempts still count). A minute's
// failed counts its drops too.
func historySQL(org uuid.UUID, since time.Time) (string, map[string]any) {
	return `SELECT date_trunc('hour', m.minute AT TIME ZONE 'UTC') AS hour, m.endpoint_id,
			sum(m.succeeded) AS succeeded, sum(m.failed - m.dropped) AS failed, sum(m.dropped) AS dropped,
			sum(m.dropped_refired) AS dropped_refired, sum(m.refired) AS refired
		FROM webhook_endpoint_minutes m WHERE m.org_id = @org AND m.minute >= @since
		GROUP BY 1, 2 ORDER BY 1, 2`, map[string]any{"org": org, "since": since}
}
