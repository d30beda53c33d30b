// Recoveries: after a receiver's outage, re-fire every dropped chain of the endpoint in a window, in
// one Temporal workflow that paces the starts, survives restarts and can be cancelled.

package recovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wds/internal/delivery"
	"wds/internal/deliverylog"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/platform/durations"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
	"wds/workflows/contract"
)

// MaxRecoveryReach is the furthest back a recovery's since may be when WDS_RETENTION is 0 (logs kept
// forever): a recovery is for an outage, and a window of years would only be a mistake that re-fires
// an org's whole history.
const MaxRecoveryReach = 90 * 24 * time.Hour

// Starter starts a committed recovery's workflow at once; the relay starts it otherwise.
type Starter interface {
	StartRecoveries(ctx context.Context, ids ...uuid.UUID)
}

// skippedSQL counts the window's other drops: the dropped chains of real events that a later chain
// of their event to the endpoint already followed. It reads the window's drops of each of @types,
// one range each of the endpoint's log index (webhook_deliveries_endpoint_type); its callers bind
// countArgs.
const skippedSQL = `SELECT count(*) FROM webhook_deliveries d
	WHERE d.endpoint_id = @ep AND d.event_type IN @types AND d.status = @dropped
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

func countRecoverable(ctx context.Context, db *gorm.DB, endpointID uuid.UUID, since, until time.Time) (RecoveryCount, error) {
	var out RecoveryCount
	args, err := countArgs(ctx, db, endpointID, since, until)
	if err != nil {
		return RecoveryCount{}, err
	}
	if err := db.WithContext(ctx).Raw("SELECT count(*) "+delivery.RecoverableSQL, args).Row().Scan(&out.Recoverable); err != nil {
		return RecoveryCount{}, fmt.Errorf("count dropped chains: %w", err)
	}
	if err := db.WithContext(ctx).Raw(skippedSQL, args).Row().Scan(&out.Skipped); err != nil {
		return RecoveryCount{}, fmt.Errorf("count skipped chains: %w", err)
	}
	return out, nil
}

// countArgs are the parameters of RecoverableSQL's count and skippedSQL: the window, and the types
// of real events the endpoint's log holds (a test event's drop is never recovered nor skipped).
func countArgs(ctx context.Context, db *gorm.DB, endpointID uuid.UUID, since, until time.Time) (map[string]any, error) {
	types, err := deliverylog.EndpointTypes(ctx, db, endpointID)
	if err != nil {
		return nil, err
	}
	args := delivery.RecoverableArgs(endpointID, since, until)
	args["types"] = slices.DeleteFunc(types, func(t string) bool { return t == events.WebhookTest })
	return args, nil
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
			return problem.Fail(endpoints.ErrEndpointDisabled, "endpoint %s is disabled; enable it before recovering its deliveries", ep.ID)
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
		return time.Time{}, problem.Fail(endpoints.ErrInvalidParameter, "since is in the future")
	case until != nil && !since.Before(*until):
		return time.Time{}, problem.Fail(endpoints.ErrInvalidParameter, "since must be before until")
	case s.Retention > 0 && since.Before(now.Add(-s.Retention)):
		return time.Time{}, problem.Fail(endpoints.ErrInvalidParameter, "since is older than the retention (%s): those deliveries are gone", durations.Text(s.Retention))
	case s.Retention <= 0 && since.Before(now.Add(-MaxRecoveryReach)):
		return time.Time{}, problem.Fail(endpoints.ErrInvalidParameter, "since is more than 90 days ago: a recovery reaches back 90 days at most")
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
		if err := delivery.FinishRecovery(ctx, tx, &rec, models.RecoveryCancelled); err != nil {
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
