package operator

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/workspace"
	"wds/models"
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
// console's charts. Any member may read it, as they may read the delivery log. It reads only the
// org's rows in the window: never its whole history, nor other orgs' windows.
func (s *Service) DeliveryHistory(ctx context.Context, q Query, since time.Time) ([]HourCount, error) {
	if err := workspace.RequireRole(ctx, s.db, q.OrgID, q.ActorID, workspace.Anyone...); err != nil {
		return nil, err
	}
	sql, args := historySQL(q.OrgID, since)
	rows := []HourCount{}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(historyPlan).Error; err != nil {
			return err
		}
		return tx.Raw(sql, args).Scan(&rows).Error
	})
	if err != nil {
		return nil, fmt.Errorf("delivery history: %w", err)
	}
	return rows, nil
}

// historyPlan makes PostgreSQL read the org's window, not every org's. Left to itself it walks
// webhook_deliveries_attempted over every org's window and filters by org (the heap's time order
// makes that look cheap), a cost that grows with the number of orgs. Without plain index scans (for
// this transaction only) it takes a bitmap of webhook_deliveries_org_keyset's range for (org_id,
// attempted_at >= since): the org's window rows and the heap pages that hold them.
const historyPlan = "SET LOCAL enable_indexscan = off"

// historySQL is DeliveryHistory's query: the org's attempts with attempted_at in the window (run
// under historyPlan); a drop's re-fire is looked up by webhook_dispatches_refired_delivery, one
// probe a dropped row (a LIMIT, so the planner cannot turn it into a hash of every org's re-fires). A re-fired chain is one whose workflow id is a re-fire's or a recovery's
// (contract.ManualWorkflowID: webhook-<kind>/...), counted at its first attempt.
func historySQL(org uuid.UUID, since time.Time) (string, map[string]any) {
	return `SELECT date_trunc('hour', t.attempted_at AT TIME ZONE 'UTC') AS hour, t.endpoint_id,
			count(*) FILTER (WHERE t.status = @succeeded) AS succeeded,
			count(*) FILTER (WHERE t.status = @failed) AS failed,
			count(*) FILTER (WHERE t.status = @dropped) AS dropped,
			count(*) FILTER (WHERE t.status = @dropped AND (
				SELECT true FROM webhook_dispatches r WHERE r.refired_delivery_id = t.id LIMIT 1)) AS dropped_refired,
			count(*) FILTER (WHERE t.attempt = 1 AND (t.workflow_id LIKE @refire OR t.workflow_id LIKE @recovery)) AS refired
		FROM webhook_deliveries t WHERE t.org_id = @org AND t.attempted_at >= @since
		GROUP BY 1, 2 ORDER BY 1, 2`, map[string]any{"org": org, "since": since,
			"succeeded": models.StatusSucceeded, "failed": models.StatusFailed, "dropped": models.StatusDropped,
			"refire": "webhook-" + models.DispatchRefire + "/%", "recovery": "webhook-" + models.DispatchRecovery + "/%"}
}
