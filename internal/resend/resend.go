package resend

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/dispatch"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/eventsearch"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
	"wds/workflows/contract"
)

// DispatchStarter starts queued chains at once after their commit; what it cannot start the
// worker's relay starts.
type DispatchStarter interface {
	StartDispatches(ctx context.Context, dispatchIDs ...uuid.UUID)
}

// ResentChain is one fresh chain of a resend.
type ResentChain struct {
	ChainID    uuid.UUID `json:"chain_id"`
	EndpointID uuid.UUID `json:"endpoint_id"`
	WorkflowID string    `json:"workflow_id"`
}

// Resent is the answer to a resend.
type Resent struct {
	Chains []ResentChain `json:"chains"`
}

// Resend delivers an event again as a fresh chain (attempt 1, the endpoint's ladder, the same event
// id and body, signed afresh) to one endpoint, or to every enabled endpoint subscribed to its type,
// whatever its outcome: a receiver may have lost a delivery that succeeded. It refuses, changing
// nothing, when an endpoint is disabled or deleted, not subscribed, or still has a chain of this
// event in progress. The chains start after commit (or by the relay).
func (s *Service) Resend(ctx context.Context, eventID, actorID uuid.UUID, endpointID *uuid.UUID) (*Resent, error) {
	out := &Resent{Chains: []ResentChain{}}
	var queued []uuid.UUID
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ev, err := loadEvent(ctx, tx, eventID)
		if err != nil {
			return err
		}
		if err := workspace.RequireRowRole(ctx, tx, ev.OrgID, actorID, "event", eventID, workspace.Managers...); err != nil {
			return err
		}
		targets, err := resendTargets(ctx, tx, ev, endpointID)
		if err != nil {
			return err
		}
		for _, ep := range targets {
			disp, err := queueChain(ctx, tx, ev, ep, models.DispatchResend, &actorID)
			if err != nil {
				return err
			}
			queued = append(queued, disp.ID)
			out.Chains = append(out.Chains, ResentChain{ChainID: disp.ChainID, EndpointID: ep, WorkflowID: disp.WorkflowID})
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: ev.OrgID, ActorID: actorID, Action: "event.resend",
			TargetType: "event", TargetID: eventID, Details: map[string]any{"chains": out.Chains}})
	})
	if err != nil {
		return nil, err
	}
	s.StartDispatches(ctx, queued...)
	return out, nil
}

// StartDispatches starts committed chains at once when the service has a starter (a re-fire's
// caller starts its own).
func (s *Service) StartDispatches(ctx context.Context, ids ...uuid.UUID) {
	if s.dispatcher != nil && len(ids) > 0 {
		s.dispatcher.StartDispatches(ctx, ids...)
	}
}

// loadEvent reads an event's row; test events are not the support desk's.
func loadEvent(ctx context.Context, tx *gorm.DB, id uuid.UUID) (*models.Event, error) {
	var ev models.Event
	err := tx.WithContext(ctx).Select("id, org_id, store_id, type, created_at").
		Where("id = ? AND type <> ?", id, events.WebhookTest).Take(&ev).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, problem.Fail(problem.NotFound, "event %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load event: %w", err)
	}
	return &ev, nil
}

// resendTargets checks the endpoint asked for, or finds every enabled endpoint subscribed to the
// event's type, and holds the event's resend lock for each, so that two resends at once cannot both
// find no chain in progress.
func resendTargets(ctx context.Context, tx *gorm.DB, ev *models.Event, endpointID *uuid.UUID) ([]uuid.UUID, error) {
	var eps []models.Endpoint
	q := tx.WithContext(ctx).Where("org_id = ?", ev.OrgID)
	if endpointID != nil {
		q = q.Where("id = ?", *endpointID)
	} else {
		q = q.Where("enabled AND deleted_at IS NULL AND ? = ANY(event_types)", ev.Type)
	}
	if err := q.Order("created_at, id").Find(&eps).Error; err != nil {
		return nil, fmt.Errorf("find endpoints: %w", err)
	}
	switch {
	case endpointID != nil && len(eps) == 0:
		return nil, problem.Fail(problem.NotFound, "endpoint %s not found", *endpointID)
	case len(eps) == 0:
		return nil, problem.Fail(endpoints.ErrInvalidParameter, "no enabled endpoint is subscribed to %s", ev.Type)
	}
	ids := make([]uuid.UUID, len(eps))
	for i, ep := range eps {
		switch {
		case ep.DeletedAt != nil || !ep.Enabled:
			return nil, problem.Fail(endpoints.ErrEndpointDisabled, "endpoint %s is disabled; enable it first", ep.ID)
		case !slices.Contains(ep.EventTypes, ev.Type):
			return nil, problem.Fail(endpoints.ErrInvalidParameter, "endpoint %s is not subscribed to %s", ep.ID, ev.Type)
		}
		if err := noChainInProgress(ctx, tx, ev, ep.ID); err != nil {
			return nil, err
		}
		ids[i] = ep.ID
	}
	return ids, nil
}

// noChainInProgress refuses a new chain of the event to the endpoint while one still has attempts to
// make (or the event's own workflow has not started yet). It takes the pair's lock first: a second
// manual start waits for the first to commit, then sees its queued chain.
func noChainInProgress(ctx context.Context, tx *gorm.DB, ev *models.Event, endpointID uuid.UUID) error {
	err := tx.WithContext(ctx).Exec("SELECT pg_advisory_xact_lock(hashtextextended('wds.chain:' || ?::text || ?::text, 0))",
		ev.ID, endpointID).Error
	if err != nil {
		return fmt.Errorf("lock chains: %w", err)
	}
	var busy bool
	err = tx.WithContext(ctx).Raw(`SELECT s.dispatched_at IS NULL OR EXISTS (SELECT 1 FROM (`+eventsearch.ChainsSQL+`) ch
			WHERE ch.endpoint_id = ? AND ch.state = `+sqlInProgress+`)
		FROM events e JOIN event_states s ON s.event_id = e.id WHERE e.id = ?`, endpointID, ev.ID).Row().Scan(&busy)
	if err != nil {
		return fmt.Errorf("look for chains in progress: %w", err)
	}
	if busy {
		return problem.Fail(ErrDeliveryInProgress, "event %s still has a chain in progress to endpoint %s; wait for it to end", ev.ID, endpointID)
	}
	return nil
}

// sqlInProgress is a chain's state while it has attempts to come, as an SQL literal.
const sqlInProgress = "'" + string(eventsearch.OutcomeInProgress) + "'"

// queueChain queues a fresh chain of the event to the endpoint, numbered by the pair's counter, which
// re-fires share.
func queueChain(ctx context.Context, tx *gorm.DB, ev *models.Event, endpointID uuid.UUID, kind string, actor *uuid.UUID) (*models.Dispatch, error) {
	n, err := dispatch.Number(ctx, tx, ev.ID, endpointID)
	if err != nil {
		return nil, err
	}
	disp := models.Dispatch{ID: uuid.New(), OrgID: ev.OrgID, Kind: kind, WorkflowID: contract.ResendWorkflowID(ev.ID, endpointID, n),
		EventID: ev.ID, EndpointID: endpointID, ChainID: uuid.New(), CreatedBy: actor}
	if _, err := dispatch.Queue(ctx, tx, &disp); err != nil {
		return nil, err
	}
	return &disp, nil
}
