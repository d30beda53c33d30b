// A recovery's batches: the delivery engine's side of a recovery, which the recovery workflow runs
// through activities (the support desk starts, lists and cancels recoveries).

package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wds/internal/dispatch"
	"wds/internal/platform/egress"
	"wds/internal/workspace"
	"wds/models"
	"wds/workflows/contract"
)

// DefaultRecoveryRate is how many chains a second a recovery starts for an endpoint without a rate
// limit.
const DefaultRecoveryRate = 10

// DefaultOrgRecoveryRate is WDS_RECOVERY_RATE's default: the most chains a second all of one org's
// recoveries start together. A recovery's chains are deliveries like any other, made by the same
// workers and the same Temporal server as every org's live events: this bound, not the endpoint's
// rate limit, is what keeps one org's recovery from taking the capacity the others' live traffic
// needs (docs/support.md). At 20 a second, another org's order creates answered 1.59 times slower at
// p99 beside an org's recovery on two cores; at 10, the recovery's pace when its endpoint has no limit
// (DefaultRecoveryRate), an org's recoveries together ask no more than one of them alone.
const DefaultOrgRecoveryRate = 10

// RecoverableSQL selects the endpoint @ep's unrecovered drops (models.UnrecoveredDrop) in [@since,
// @until): the chains that dropped there and whose event has not gone to it again since, by a
// re-fire, a resend or a recovery. Test events are not among them. Its callers bind RecoverableArgs.
const RecoverableSQL = `FROM webhook_unrecovered_drops u
	WHERE u.endpoint_id = @ep AND u.dropped_at >= @since AND u.dropped_at < @until`

// RecoverableArgs are RecoverableSQL's parameters, and those of the support desk's count of the
// window's other drops.
func RecoverableArgs(endpointID uuid.UUID, since, until time.Time) map[string]any {
	return map[string]any{"ep": endpointID, "since": since, "until": until, "dropped": models.StatusDropped}
}

// FinishRecovery ends a running recovery with status.
func FinishRecovery(ctx context.Context, tx *gorm.DB, rec *models.Recovery, status string) error {
	var at time.Time
	err := tx.WithContext(ctx).Raw("UPDATE webhook_recoveries SET status = ?, finished_at = clock_timestamp() WHERE id = ? RETURNING finished_at",
		status, rec.ID).Row().Scan(&at)
	if err != nil {
		return fmt.Errorf("finish recovery: %w", err)
	}
	rec.Status, rec.FinishedAt = status, &at
	return nil
}

// maxBatch caps one batch's chains, so a fast rate limit still commits in small steps.
const maxBatch = 100

// NextRecoveryBatch queues the next chains of a running recovery, in one transaction under the
// recovery's row lock (a cancel waits for it, and once committed no batch starts another chain), and
// returns the batch's progress and the queued starts. It ends the recovery when nothing is left, or
// when the endpoint is disabled or deleted.
//
// orgRate is the org's budget of chains a second, shared by its running recoveries (0 is
// DefaultOrgRecoveryRate).
func NextRecoveryBatch(ctx context.Context, db *gorm.DB, p contract.RecoveryParams, orgRate int) (out contract.RecoveryBatch, queued []uuid.UUID, err error) {
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rec models.Recovery
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", p.RecoveryID).Take(&rec).Error; err != nil {
			return fmt.Errorf("load recovery: %w", err)
		}
		var ep models.Endpoint
		if err := tx.Where("id = ?", rec.EndpointID).Take(&ep).Error; err != nil {
			return fmt.Errorf("load endpoint: %w", err)
		}
		out = contract.RecoveryBatch{Status: rec.Status, EndpointURL: egress.RedactURL(ep.URL), Total: rec.Total, Started: rec.Started, Wait: time.Second}
		switch {
		case rec.Status != models.RecoveryRunning:
			out.Done = true
			return nil
		case !ep.Enabled || ep.DeletedAt != nil:
			// Chains started now would stop without sending: the recovery ends here, audited as the
			// service's own cancel (the row lock makes it once).
			out.Done, out.Status = true, models.RecoveryCancelled
			if err := FinishRecovery(ctx, tx, &rec, models.RecoveryCancelled); err != nil {
				return err
			}
			reason := models.ReasonEndpointDisabled
			if ep.DeletedAt != nil {
				reason = models.ReasonEndpointDeleted
			}
			return workspace.AuditAct(ctx, tx, workspace.Act{OrgID: rec.OrgID, Action: "recovery.auto_cancelled",
				TargetType: "webhook_recovery", TargetID: rec.ID,
				Details: map[string]any{"endpoint_id": rec.EndpointID, "reason": reason, "started": rec.Started, "total": rec.Total}})
		}
		rate, err := recoveryRate(ctx, tx, &rec, &ep, orgRate)
		if err != nil {
			return err
		}
		n := max(1, min(int(rate), maxBatch))
		var taken int
		if queued, taken, err = queueRecovered(ctx, tx, &rec, n); err != nil {
			return err
		}
		out.Started += len(queued)
		if taken > 0 {
			// Rows re-fired by hand meanwhile were taken but not queued: the next batch comes sooner.
			out.Wait = time.Duration(float64(len(queued)) / rate * float64(time.Second))
			return tx.Exec("UPDATE webhook_recoveries SET started = started + ? WHERE id = ?", len(queued), rec.ID).Error
		}
		// Nothing is left after the cursor: done.
		out.Done, out.Status = true, models.RecoveryCompleted
		return FinishRecovery(ctx, tx, &rec, models.RecoveryCompleted)
	})
	if err != nil {
		return contract.RecoveryBatch{}, nil, err
	}
	return out, queued, nil
}

// orgRecoveriesSQL counts an org's running recoveries (webhook_recoveries_org_running).
const orgRecoveriesSQL = "SELECT count(*) FROM webhook_recoveries WHERE org_id = ? AND status = ?"

// recoveryRate is how many chains a second the recovery starts now: its endpoint's rate limit (or
// DefaultRecoveryRate), and no more than its equal share of the org's budget among the org's running
// recoveries, counted afresh each batch so a share grows as the others finish. A share below one a
// second starts one chain and waits longer.
func recoveryRate(ctx context.Context, tx *gorm.DB, rec *models.Recovery, ep *models.Endpoint, orgRate int) (float64, error) {
	rate := DefaultRecoveryRate
	if ep.RateLimit != nil {
		rate = *ep.RateLimit
	}
	if orgRate <= 0 {
		orgRate = DefaultOrgRecoveryRate
	}
	var running int64
	if err := tx.WithContext(ctx).Raw(orgRecoveriesSQL, rec.OrgID, models.RecoveryRunning).Scan(&running).Error; err != nil {
		return 0, fmt.Errorf("count the org's recoveries: %w", err)
	}
	return min(float64(rate), float64(orgRate)/float64(max(running, 1))), nil
}

// batchSQL takes the recovery's next chains: the endpoint's unrecovered drops after the cursor
// (@after_at, @after_id), in time order, through webhook_unrecovered_drops_endpoint (the order is
// the index's, endpoint first, so no other index can serve it without a sort). Drops whose event
// went to the endpoint again meanwhile (re-fired by hand, resent) are gone from it. Each dropped row
// is locked as a hand re-fire locks it, waiting for one a re-fire holds (a short transaction); the
// unique re-fire of the row is the final word, so a chain re-fired by hand meanwhile is not queued
// again.
const batchSQL = `SELECT d.id, d.event_id, d.attempted_at FROM webhook_unrecovered_drops u
	JOIN webhook_deliveries d ON d.id = u.delivery_id
	WHERE u.endpoint_id = @ep AND (u.dropped_at, u.delivery_id) > (@after_at, @after_id) AND u.dropped_at < @until
	ORDER BY u.endpoint_id, u.dropped_at, u.delivery_id LIMIT @n FOR UPDATE OF d`

// batchArgs are batchSQL's parameters for the recovery's next n chains.
func batchArgs(rec *models.Recovery, n int) map[string]any {
	args := RecoverableArgs(rec.EndpointID, rec.Since, rec.Until)
	args["n"], args["after_at"], args["after_id"] = n, rec.Since, uuid.Nil
	if rec.AfterAt != nil && rec.AfterID != nil {
		args["after_at"], args["after_id"] = *rec.AfterAt, *rec.AfterID
	}
	return args
}

// queueRecovered queues up to n of the recovery's chains after its cursor, oldest drop first, moves
// the cursor past the last one taken and says how many it took (re-fired by hand meanwhile or not).
func queueRecovered(ctx context.Context, tx *gorm.DB, rec *models.Recovery, n int) (queued []uuid.UUID, taken int, err error) {
	var rows []struct {
		ID          uuid.UUID
		EventID     uuid.UUID
		AttemptedAt time.Time
	}
	if err := tx.WithContext(ctx).Raw(batchSQL, batchArgs(rec, n)).Scan(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("find dropped chains: %w", err)
	}
	if len(rows) > 0 {
		last := rows[len(rows)-1]
		err := tx.WithContext(ctx).Exec("UPDATE webhook_recoveries SET after_at = ?, after_id = ? WHERE id = ?", last.AttemptedAt, last.ID, rec.ID).Error
		if err != nil {
			return nil, 0, fmt.Errorf("move recovery cursor: %w", err)
		}
	}
	for _, r := range rows {
		num, err := dispatch.Number(ctx, tx, r.EventID, rec.EndpointID)
		if err != nil {
			return nil, 0, err
		}
		d := models.Dispatch{ID: uuid.New(), OrgID: rec.OrgID, Kind: models.DispatchRecovery,
			WorkflowID: contract.ManualWorkflowID(models.DispatchRecovery, r.EventID, rec.EndpointID, num),
			EventID:    r.EventID, EndpointID: rec.EndpointID, ChainID: uuid.New(), RefiredDeliveryID: &r.ID,
			RecoveryID: &rec.ID, CreatedBy: rec.CreatedBy}
		ok, err := dispatch.Queue(ctx, tx, &d)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			queued = append(queued, d.ID)
		}
	}
	return queued, len(rows), nil
}
