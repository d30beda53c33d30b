package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wds/internal/outbox"
	"wds/internal/platform/egress"
	"wds/models"
	"wds/workflows/contract"
)

// recoveryRow is a committed recovery waiting for its workflow.
type recoveryRow struct {
	ID          uuid.UUID
	OrgID       uuid.UUID
	EndpointURL string
	Total       int
	Since       string
}

func (r recoveryRow) rowID() uuid.UUID { return r.ID }

// recoveries is webhook_recoveries as the relay's queue: only marked, since a recovery has no lease
// (claimRecoveries says why).
var recoveries = outbox.Queue{
	Table: "webhook_recoveries",
	Mark: `UPDATE webhook_recoveries SET dispatched_at = clock_timestamp() WHERE id IN (
		SELECT id FROM webhook_recoveries WHERE id IN ? AND dispatched_at IS NULL ORDER BY id FOR NO KEY UPDATE)
		AND dispatched_at IS NULL`,
}

// unstartedRecoveries selects running recoveries whose workflow is not started yet, oldest first.
func unstartedRecoveries(db *gorm.DB) *gorm.DB {
	return db.Table("webhook_recoveries r").
		Select("r.id, r.org_id, w.url AS endpoint_url, r.total, to_char(r.since AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS since").
		Joins("JOIN webhook_endpoints w ON w.id = r.endpoint_id").
		Where("r.dispatched_at IS NULL AND r.status = ?", models.RecoveryRunning).Order("r.created_at, r.id")
}

// StartRecoveries starts committed recoveries' workflows at once; what fails is left to the relay.
func (s *Starter) StartRecoveries(ctx context.Context, ids ...uuid.UUID) {
	if len(ids) == 0 {
		return
	}
	read := func(db *gorm.DB, rows *[]recoveryRow) error {
		return unstartedRecoveries(db).Where("r.id IN ?", ids).Find(rows).Error
	}
	s.immediately(ctx, func(ctx context.Context) error {
		return startNow(ctx, s.DB, recoveries, read, s.startRecoveryRows)
	})
}

// claimRecoveries is the relay's pass over recoveries whose workflow a crash or a Temporal outage
// left unstarted. Recoveries have no lease: relays reading at once take them apart under SKIP
// LOCKED, in one statement (its lock ends with it, as the transaction around it did before the
// starts), and a double start is rejected by the workflow id.
func (s *Starter) claimRecoveries(ctx context.Context, limit int) (int, error) {
	var rows []recoveryRow
	err := s.pastGrace(unstartedRecoveries(s.DB.WithContext(ctx)), "r.created_at").Limit(limit).
		Clauses(clause.Locking{Strength: "UPDATE", Table: clause.Table{Name: "r"}, Options: "SKIP LOCKED"}).Find(&rows).Error
	if err != nil {
		return 0, fmt.Errorf("claim recoveries: %w", err)
	}
	started, startErr := s.startRecoveryRows(ctx, rows)
	if err := markStarted(s.DB.WithContext(ctx), recoveries, started); err != nil {
		return 0, err
	}
	return len(started), startErr
}

// startRecoveryRows starts each recovery's workflow (startEach).
func (s *Starter) startRecoveryRows(ctx context.Context, rows []recoveryRow) ([]uuid.UUID, error) {
	return startEach(ctx, rows, s.startRecovery)
}

// startRecovery starts recover-{id}; its summary names the endpoint and the count, so the Temporal
// UI's list reads as the support desk's.
func (s *Starter) startRecovery(ctx context.Context, r recoveryRow) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	_, err := s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       contract.RecoveryWorkflowID(r.ID),
		TaskQueue:                                contract.ManualTaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            recoverySummary(r),
		StaticDetails:                            fmt.Sprintf("Re-fires every dropped, never re-fired chain of endpoint %s whose last attempt falls in the recovery's window (%s when it started), paced by the endpoint's rate limit.", egress.RedactURL(r.EndpointURL), chainsOf(r.Total)),
		TypedSearchAttributes:                    temporal.NewSearchAttributes(contract.AttrOrgID.ValueSet(r.OrgID.String())),
	}, contract.RecoveryWorkflowName, contract.RecoveryParams{RecoveryID: r.ID})
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &already) {
		return fmt.Errorf("start workflow %s: %w", contract.RecoveryWorkflowID(r.ID), err)
	}
	return nil
}

// recoverySummary is the recovery's line in the Temporal UI's list. The UI renders a summary as
// Markdown and makes a link of a URL with the punctuation that follows it, so the URL is followed by
// a space: "recover 3 chains of https://... since ... UTC".
func recoverySummary(r recoveryRow) string {
	return fmt.Sprintf("recover %s of %s since %s UTC", chainsOf(r.Total), egress.RedactURL(r.EndpointURL), r.Since)
}

// chainsOf is "1 chain" or "n chains".
func chainsOf(n int) string {
	if n == 1 {
		return "1 chain"
	}
	return fmt.Sprintf("%d chains", n)
}
