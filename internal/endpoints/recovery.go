// Recoveries: after a receiver's outage, re-fire every dropped chain of the endpoint in a window, in
// one Temporal workflow that paces the starts, survives restarts and can be cancelled.

package endpoints

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wds/internal/events"
	"wds/internal/platform/durations"
	"wds/internal/platform/egress"
	"wds/internal/platform/problem"
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

// MaxRecoveryReach is the furthest back a recovery's since may be when WDS_RETENTION is 0 (logs kept
// forever): a recovery is for an outage, and a window of years would only be a mistake that re-fires
// an org's whole history.
const MaxRecoveryReach = 90 * 24 * time.Hour

// RecoveryStarter starts a committed recovery's workflow at once; the relay starts it otherwise.
type RecoveryStarter interface {
	StartRecoveries(ctx context.Context, ids ...uuid.UUID)
}

// recoverableSQL selects the endpoint @ep's unrecovered drops (models.UnrecoveredDrop) in [@since,
// @until): the chains that dropped there and whose event has not gone to it again since, by a
// re-fire, a resend or a recovery. Test events are not among them. Its callers bind recoverableArgs.
const recoverableSQL = `FROM webhook_unrecovered_drops u
	WHERE u.endpoint_id = @ep AND u.dropped_at >= @since AND u.dropped_at < @until`

// skippedSQL counts the window's other drops: the dropped chains of real events that a later chain
// of their event to the endpoint already followed.
const skippedSQL = `SELECT count(*) FROM webhook_deliveries d
	WHERE d.endpoint_id = @ep AND d.status = @dropped AND d.event_type <> @test
		AND d.attempted_at >= @since AND d.attempted_at < @until
		AND NOT EXISTS (SELECT 1 FROM webhook_unrecovered_drops u WHERE u.delivery_id = d.id)`

// RecoveryCount is what a recovery over a window would do now: re-fire Recoverable chains, and skip
// Skipped, the window's dropped chains whose event already went to the endpoint again after they
// dropped (re-fired, resent or recovered since), so the receiver never gets one twice from us.
type RecoveryCount struct {
	Recoverable int
	Skipped     int
}

// CountRecoverable is what a recovery of the endpoint over [since, until) would do now (the console
// shows it before the operator confirms). A nil until is now.
func (s *Service) CountRecoverable(ctx context.Context, endpointID uuid.UUID, actorID *uuid.UUID, since time.Time, until *time.Time) (RecoveryCount, error) {
	ep, err := s.endpointFor(ctx, endpointID, actorID, workspace.Anyone...)
	if err != nil {
		return RecoveryCount{}, err
	}
	end, err := s.recoveryWindow(since, until)
	if err != nil {
		return RecoveryCount{}, err
	}
	return countRecoverable(ctx, s.DB, ep.ID, since, end)
}

// recoverableArgs are recoverableSQL's and skippedSQL's parameters.
func recoverableArgs(endpointID uuid.UUID, since, until time.Time) map[string]any {
	return map[string]any{"ep": endpointID, "since": since, "until": until, "dropped": models.StatusDropped, "test": events.WebhookTest}
}

func countRecoverable(ctx context.Context, db *gorm.DB, endpointID uuid.UUID, since, until time.Time) (RecoveryCount, error) {
	var out RecoveryCount
	args := recoverableArgs(endpointID, since, until)
	if err := db.WithContext(ctx).Raw("SELECT count(*) "+recoverableSQL, args).Row().Scan(&out.Recoverable); err != nil {
		return RecoveryCount{}, fmt.Errorf("count dropped chains: %w", err)
	}
	if err := db.WithContext(ctx).Raw(skippedSQL, args).Row().Scan(&out.Skipped); err != nil {
		return RecoveryCount{}, fmt.Errorf("count skipped chains: %w", err)
	}
	return out, nil
}

// Recover starts a recovery of the endpoint's dropped chains over [since, until) (until nil: now).
// It refuses a window that is out of order, in the future or older than the retention, a disabled
// endpoint, and a second recovery of an endpoint while one runs. A window with nothing to re-fire
// is a recovery completed as it is asked for: it runs no workflow.
func (s *Service) Recover(ctx context.Context, endpointID, actorID uuid.UUID, since time.Time, until *time.Time) (*models.Recovery, error) {
	ep, err := s.endpointFor(ctx, endpointID, &actorID, workspace.Managers...)
	if err != nil {
		return nil, err
	}
	end, err := s.recoveryWindow(since, until)
	if err != nil {
		return nil, err
	}
	rec := models.Recovery{ID: uuid.New(), OrgID: ep.OrgID, EndpointID: ep.ID, Since: since.UTC(), Until: end.UTC(), Status: models.RecoveryRunning, CreatedBy: &actorID}
	rec.WorkflowID = contract.RecoveryWorkflowID(rec.ID)
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var live models.Endpoint
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ? AND deleted_at IS NULL", ep.ID).Take(&live).Error
		if errors.Is(err, gorm.ErrRecordNotFound) || (err == nil && !live.Enabled) {
			return problem.Fail(ErrEndpointDisabled, "endpoint %s is disabled; enable it before recovering its deliveries", ep.ID)
		}
		if err != nil {
			return fmt.Errorf("lock endpoint: %w", err)
		}
		var running []uuid.UUID
		if err := tx.Model(&models.Recovery{}).Where("endpoint_id = ? AND status = ?", ep.ID, models.RecoveryRunning).Pluck("id", &running).Error; err != nil {
			return fmt.Errorf("look for a running recovery: %w", err)
		}
		if len(running) > 0 {
			return problem.Fail(ErrRecoveryInProgress, "recovery %s of endpoint %s is still running; cancel it or wait for it", running[0], ep.ID)
		}
		n, err := countRecoverable(ctx, tx, ep.ID, rec.Since, rec.Until)
		if err != nil {
			return err
		}
		rec.Total, rec.Skipped = n.Recoverable, n.Skipped
		if rec.Total == 0 {
			now := time.Now().UTC()
			rec.Status, rec.FinishedAt, rec.DispatchedAt = models.RecoveryCompleted, &now, &now
		}
		if err := tx.Create(&rec).Error; err != nil {
			var pg *pgconn.PgError
			if errors.As(err, &pg) && pg.Code == "23505" && pg.ConstraintName == "webhook_recoveries_running" {
				return problem.Fail(ErrRecoveryInProgress, "a recovery of endpoint %s is already running", ep.ID)
			}
			return fmt.Errorf("create recovery: %w", err)
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: ep.OrgID, ActorID: actorID, Action: "endpoint.recover",
			TargetType: "webhook_recovery", TargetID: rec.ID, Details: map[string]any{"endpoint_id": ep.ID,
				"since": rec.Since, "until": rec.Until, "total": rec.Total, "skipped": rec.Skipped, "workflow_id": rec.WorkflowID}})
	})
	if err != nil {
		return nil, err
	}
	if s.Recoveries != nil && rec.Running() {
		s.Recoveries.StartRecoveries(ctx, rec.ID)
	}
	return &rec, nil
}

// recoveryWindow checks [since, until) and returns its end: until, or now when it is nil or later.
func (s *Service) recoveryWindow(since time.Time, until *time.Time) (time.Time, error) {
	now := time.Now().UTC()
	end := now
	if until != nil && until.Before(now) {
		end = *until
	}
	switch {
	case since.After(now):
		return time.Time{}, problem.Fail(ErrInvalidParameter, "since is in the future")
	case until != nil && !since.Before(*until):
		return time.Time{}, problem.Fail(ErrInvalidParameter, "since must be before until")
	case s.Retention > 0 && since.Before(now.Add(-s.Retention)):
		return time.Time{}, problem.Fail(ErrInvalidParameter, "since is older than the retention (%s): those deliveries are gone", durations.Text(s.Retention))
	case s.Retention <= 0 && since.Before(now.Add(-MaxRecoveryReach)):
		return time.Time{}, problem.Fail(ErrInvalidParameter, "since is more than 90 days ago: a recovery reaches back 90 days at most")
	}
	return end, nil
}

// endpointFor loads an endpoint (deleted ones too) the actor has one of roles in; nil actor is the
// database's own operator. To an actor outside its org it does not exist.
func (s *Service) endpointFor(ctx context.Context, id uuid.UUID, actorID *uuid.UUID, roles ...models.Role) (*models.Endpoint, error) {
	var ep models.Endpoint
	err := s.DB.WithContext(ctx).Where("id = ?", id).Take(&ep).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, problem.Fail(problem.NotFound, "endpoint %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load endpoint: %w", err)
	}
	if actorID != nil {
		if err := workspace.RequireRowRole(ctx, s.DB, ep.OrgID, *actorID, "endpoint", id, roles...); err != nil {
			return nil, err
		}
	}
	return &ep, nil
}

// Recovery is one recovery and its progress. A nil actor is the database's own operator.
func (s *Service) Recovery(ctx context.Context, id uuid.UUID, actorID *uuid.UUID) (*models.Recovery, error) {
	var rec models.Recovery
	err := s.DB.WithContext(ctx).Where("id = ?", id).Take(&rec).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, problem.Fail(problem.NotFound, "recovery %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load recovery: %w", err)
	}
	if actorID != nil {
		if err := workspace.RequireRowRole(ctx, s.DB, rec.OrgID, *actorID, "recovery", id, workspace.Anyone...); err != nil {
			return nil, err
		}
	}
	return &rec, withOutcomes(ctx, s.DB, &rec)
}

// LatestRecovery is the endpoint's most recent recovery that had chains to re-fire, or nil: one
// that found nothing to re-fire never hides the one that did.
func (s *Service) LatestRecovery(ctx context.Context, endpointID uuid.UUID) (*models.Recovery, error) {
	var recs []models.Recovery
	err := s.DB.WithContext(ctx).Where("endpoint_id = ? AND total > 0", endpointID).
		Order("created_at DESC").Limit(1).Find(&recs).Error
	if err != nil {
		return nil, fmt.Errorf("load recovery: %w", err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	return &recs[0], withOutcomes(ctx, s.DB, &recs[0])
}

// CancelRecovery stops a recovery from starting more chains; the chains it started run on. Cancelling
// one that already ended answers it as it is.
func (s *Service) CancelRecovery(ctx context.Context, id, actorID uuid.UUID) (*models.Recovery, error) {
	var rec models.Recovery
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The row lock waits for a batch in flight: once this commits, no batch starts another chain.
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&rec).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return problem.Fail(problem.NotFound, "recovery %s not found", id)
		}
		if err != nil {
			return fmt.Errorf("load recovery: %w", err)
		}
		if err := workspace.RequireRowRole(ctx, tx, rec.OrgID, actorID, "recovery", id, workspace.Managers...); err != nil {
			return err
		}
		if rec.Status != models.RecoveryRunning {
			return nil
		}
		if err := finishRecovery(ctx, tx, &rec, models.RecoveryCancelled); err != nil {
			return err
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: rec.OrgID, ActorID: actorID, Action: "recovery.cancel",
			TargetType: "webhook_recovery", TargetID: rec.ID, Details: map[string]any{"endpoint_id": rec.EndpointID, "started": rec.Started, "total": rec.Total}})
	})
	if err != nil {
		return nil, err
	}
	return &rec, withOutcomes(ctx, s.DB, &rec)
}

// finishRecovery ends a running recovery with status.
func finishRecovery(ctx context.Context, tx *gorm.DB, rec *models.Recovery, status string) error {
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
			if err := finishRecovery(ctx, tx, &rec, models.RecoveryCancelled); err != nil {
				return err
			}
			reason := models.ReasonEndpointDisabled
			if ep.DeletedAt != nil {
				reason = models.ReasonEndpointDeleted
			}
			return auditAutomatic(ctx, tx, rec.OrgID, "recovery.auto_cancelled", "webhook_recovery", rec.ID,
				map[string]any{"endpoint_id": rec.EndpointID, "reason": reason, "started": rec.Started, "total": rec.Total})
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
		return finishRecovery(ctx, tx, &rec, models.RecoveryCompleted)
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
	args := recoverableArgs(rec.EndpointID, rec.Since, rec.Until)
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
		var num int
		err := tx.WithContext(ctx).Raw(`INSERT INTO webhook_refire_counters (event_id, endpoint_id, n) VALUES (?, ?, 1)
			ON CONFLICT (event_id, endpoint_id) DO UPDATE SET n = webhook_refire_counters.n + 1 RETURNING n`,
			r.EventID, rec.EndpointID).Row().Scan(&num)
		if err != nil {
			return nil, 0, fmt.Errorf("count manual starts: %w", err)
		}
		var ids []uuid.UUID
		err = tx.WithContext(ctx).Raw(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id,
				refired_delivery_id, recovery_id, created_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (refired_delivery_id) WHERE refired_delivery_id IS NOT NULL DO NOTHING RETURNING id`,
			uuid.New(), rec.OrgID, models.DispatchRecovery, contract.ManualWorkflowID(models.DispatchRecovery, r.EventID, rec.EndpointID, num),
			r.EventID, rec.EndpointID, uuid.New(), r.ID, rec.ID, rec.CreatedBy).Scan(&ids).Error
		if err != nil {
			return nil, 0, fmt.Errorf("queue recovered chain: %w", err)
		}
		queued = append(queued, ids...)
	}
	return queued, len(rows), nil
}
