package operator

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"wds/internal/workspace"
	"wds/models"
)

// HourCount is what one endpoint's delivery log holds for one hour (UTC): its attempts by status,
// and how many re-fired or recovered chains made their first attempt then.
type HourCount struct {
	Hour                                time.Time
	EndpointID                          uuid.UUID
	Succeeded, Failed, Dropped, Refired int64
}

// DeliveryHistory counts the org's delivery attempts since a time, by hour and endpoint, for the
// console's charts. Any member may read it, as they may read the delivery log. It reads only the
// window's rows, never the org's whole history.
func (s *Service) DeliveryHistory(ctx context.Context, q Query, since time.Time) ([]HourCount, error) {
	if err := workspace.RequireRole(ctx, s.db, q.OrgID, q.ActorID, workspace.Anyone...); err != nil {
		return nil, err
	}
	sql, args := historySQL(q.OrgID, since)
	rows := []HourCount{}
	if err := s.db.WithContext(ctx).Raw(sql, args).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("delivery history: %w", err)
	}
	return rows, nil
}

// historySQL is DeliveryHistory's query: the org's attempts with attempted_at in the window, which
// PostgreSQL reads as an index range on attempted_at (webhook_deliveries_org_keyset, or
// webhook_deliveries_attempted where every org's window is fewer pages than the org's rows). A
// re-fired chain is one whose workflow id is a re-fire's or a recovery's
// (contract.ManualWorkflowID: webhook-<kind>/...), counted at its first attempt.
func historySQL(org uuid.UUID, since time.Time) (string, map[string]any) {
	return `SELECT date_trunc('hour', t.attempted_at AT TIME ZONE 'UTC') AS hour, t.endpoint_id,
			count(*) FILTER (WHERE t.status = @succeeded) AS succeeded,
			count(*) FILTER (WHERE t.status = @failed) AS failed,
			count(*) FILTER (WHERE t.status = @dropped) AS dropped,
			count(*) FILTER (WHERE t.attempt = 1 AND (t.workflow_id LIKE @refire OR t.workflow_id LIKE @recovery)) AS refired
		FROM webhook_deliveries t WHERE t.org_id = @org AND t.attempted_at >= @since
		GROUP BY 1, 2 ORDER BY 1, 2`, map[string]any{"org": org, "since": since,
			"succeeded": models.StatusSucceeded, "failed": models.StatusFailed, "dropped": models.StatusDropped,
			"refire": "webhook-" + models.DispatchRefire + "/%", "recovery": "webhook-" + models.DispatchRecovery + "/%"}
}
