// Re-firing a dropped delivery: a fresh chain of its event to its endpoint, numbered by the pair's
// counter, which resends share.

package resend

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wds/internal/dispatch"
	"wds/internal/events"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
	"wds/workflows/contract"
)

// Refirable reports whether an operator may re-fire the attempt: a dropped one of a real event
// (Service.Refire says why any other may not).
func Refirable(d models.Delivery) bool {
	return d.Status == models.StatusDropped && d.EventType != events.WebhookTest
}

// Refired names the new chain of a re-fire and the workflow that runs it.
type Refired struct {
	ChainID    uuid.UUID `json:"chain_id"`
	WorkflowID string    `json:"workflow_id"`
	// DispatchID is the queued start, for the caller that starts it at once.
	DispatchID uuid.UUID `json:"-"`
}

// Refire queues a fresh chain (attempt 1 of max_attempts) of a dropped delivery's event to its
// endpoint. The workflow is started after commit by the caller or, failing that, by the relay. A
// delivery already re-fired answers that re-fire's chain again (its start is harmless to repeat:
// the workflow id is taken), so a double click starts one chain. A delivery of an org the actor is
// not in is not found.
func (s *Service) Refire(ctx context.Context, deliveryID, actorID uuid.UUID) (*Refired, error) {
	var out Refired
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var d models.Delivery
		// The row lock makes concurrent re-fires of one delivery take turns; the second then finds
		// the first one's dispatch.
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", deliveryID).Take(&d).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return problem.Fail(problem.NotFound, "delivery %s not found", deliveryID)
		}
		if err != nil {
			return fmt.Errorf("load delivery: %w", err)
		}
		if err := workspace.RequireRowRole(ctx, tx, d.OrgID, actorID, "delivery", deliveryID, workspace.Managers...); err != nil {
			return err
		}
		if d.Status != models.StatusDropped {
			return problem.Fail(ErrDeliveryNotDropped, "delivery %s is %s; only dropped deliveries can be re-fired", d.ID, d.Status)
		}
		if d.EventType == events.WebhookTest {
			return problem.Fail(problem.Invalid, "a test delivery cannot be re-fired; send a new test event")
		}
		if err := liveEnabled(ctx, tx, d.EndpointID, d.OrgID); err != nil {
			return err
		}
		if found, err := earlierRefire(tx, d.ID, &out); found || err != nil {
			return err
		}
		n, err := dispatch.Number(ctx, tx, d.EventID, d.EndpointID)
		if err != nil {
			return err
		}
		disp := models.Dispatch{ID: uuid.New(), OrgID: d.OrgID, Kind: models.DispatchRefire,
			WorkflowID: contract.RefireWorkflowID(d.EventID, d.EndpointID, n), EventID: d.EventID,
			EndpointID: d.EndpointID, ChainID: uuid.New(), RefiredDeliveryID: &d.ID, CreatedBy: &actorID}
		queued, err := dispatch.Queue(ctx, tx, &disp)
		if err != nil {
			return err
		}
		if !queued {
			// Another chain re-fires it already. A recovery's batch locks the attempt's row as this
			// does, so it cannot queue one between the look above and this insert; should the unique
			// index still refuse, answer that chain, never an empty one.
			if found, err := earlierRefire(tx, d.ID, &out); found || err != nil {
				return err
			}
			return fmt.Errorf("re-fire delivery %s: refused as re-fired, but no chain re-fires it", d.ID)
		}
		out = Refired{ChainID: disp.ChainID, WorkflowID: disp.WorkflowID, DispatchID: disp.ID}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: d.OrgID, ActorID: actorID,
			Action: "webhook_delivery.refire", TargetType: "webhook_delivery", TargetID: d.ID,
			Details: map[string]any{"event_id": d.EventID, "endpoint_id": d.EndpointID, "chain_id": disp.ChainID, "workflow_id": disp.WorkflowID}})
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// earlierRefire finds the chain already re-firing the delivery, if any, and answers with it.
func earlierRefire(tx *gorm.DB, deliveryID uuid.UUID, out *Refired) (bool, error) {
	var earlier []models.Dispatch
	if err := tx.Where("refired_delivery_id = ?", deliveryID).Limit(1).Find(&earlier).Error; err != nil {
		return false, fmt.Errorf("look up earlier re-fire: %w", err)
	}
	if len(earlier) == 0 {
		return false, nil
	}
	*out = Refired{ChainID: earlier[0].ChainID, WorkflowID: earlier[0].WorkflowID, DispatchID: earlier[0].ID}
	return true, nil
}
