// Resending an order's events: "order 1005 never arrived" as one action. Every event about the
// order (its own, its payments', its shipments') goes once more to one endpoint, oldest first.

package resend

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/order"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// ResendOrder resends every event about the order to the endpoint, each once, oldest first, as
// Resend does one (a fresh chain, the same event id and body). Events of types the endpoint is not
// subscribed to are left out. The order is the endpoint's org's, named by its id or its number. It
// refuses, changing nothing, when the endpoint is disabled or deleted, when it is subscribed to none
// of the order's events, and when any of them still has a chain in progress to it.
func (s *Service) ResendOrder(ctx context.Context, ref order.Ref, endpointID, actorID uuid.UUID) (*Resent, error) {
	out := &Resent{Chains: []ResentChain{}}
	var queued []uuid.UUID
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var ep models.Endpoint
		err := tx.Where("id = ?", endpointID).Take(&ep).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return problem.Fail(problem.NotFound, "endpoint %s not found", endpointID)
		}
		if err != nil {
			return fmt.Errorf("load endpoint: %w", err)
		}
		if err := workspace.RequireRowRole(ctx, tx, ep.OrgID, actorID, "endpoint", endpointID, workspace.Managers...); err != nil {
			return err
		}
		if ep.DeletedAt != nil || !ep.Enabled {
			return problem.Fail(endpoints.ErrEndpointDisabled, "endpoint %s is disabled; enable it first", ep.ID)
		}
		orderID, err := ref.Resolve(ctx, tx, ep.OrgID)
		if err != nil {
			return err
		}
		evs, err := orderEvents(ctx, tx, ep, orderID, ref)
		if err != nil {
			return err
		}
		for i := range evs {
			if err := noChainInProgress(ctx, tx, &evs[i], ep.ID); err != nil {
				return err
			}
			disp, err := queueChain(ctx, tx, &evs[i], ep.ID, models.DispatchResend, &actorID)
			if err != nil {
				return err
			}
			queued = append(queued, disp.ID)
			out.Chains = append(out.Chains, ResentChain{ChainID: disp.ChainID, EndpointID: ep.ID, WorkflowID: disp.WorkflowID})
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: ep.OrgID, ActorID: actorID, Action: "order.resend",
			TargetType: "order", TargetID: orderID, Details: map[string]any{"endpoint_id": ep.ID, "chains": out.Chains}})
	})
	if err != nil {
		return nil, err
	}
	s.StartDispatches(ctx, queued...)
	return out, nil
}

// orderEvents are the order's events the endpoint is subscribed to, oldest first.
func orderEvents(ctx context.Context, tx *gorm.DB, ep models.Endpoint, orderID uuid.UUID, ref order.Ref) ([]models.Event, error) {
	var all []models.Event
	err := tx.WithContext(ctx).Select("id, org_id, store_id, type, created_at").
		Where("org_id = ? AND order_id = ? AND type <> ?", ep.OrgID, orderID, events.WebhookTest).
		Order("created_at, id").Find(&all).Error
	if err != nil {
		return nil, fmt.Errorf("find the order's events: %w", err)
	}
	var subscribed []models.Event
	for _, ev := range all {
		if slices.Contains(ep.EventTypes, ev.Type) {
			subscribed = append(subscribed, ev)
		}
	}
	if len(subscribed) == 0 {
		return nil, problem.Fail(endpoints.ErrInvalidParameter, "endpoint %s is subscribed to none of order %s's %d events", ep.ID, ref, len(all))
	}
	return subscribed, nil
}
