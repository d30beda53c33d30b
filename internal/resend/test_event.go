// A test event: a webhook.test event queued to one endpoint, its chain started as a re-fire's is.

package resend

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wds/internal/dispatch"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/outbox"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
	"wds/workflows/contract"
)

// liveEnabled checks that the endpoint exists in org, is not deleted and is enabled. Its row lock
// keeps a disable out until the caller commits; it is the strength the re-fire's queued chain takes
// again to keep the endpoint's unrecovered drops (migration 00035), so two re-fires at once wait for
// each other instead of each holding a share the other must upgrade.
func liveEnabled(ctx context.Context, tx *gorm.DB, endpointID, orgID uuid.UUID) error {
	var ep models.Endpoint
	err := tx.WithContext(ctx).Clauses(clause.Locking{Strength: "NO KEY UPDATE"}).
		Where("id = ? AND org_id = ? AND deleted_at IS NULL", endpointID, orgID).Take(&ep).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return problem.Fail(problem.NotFound, "endpoint %s not found", endpointID)
	}
	if err != nil {
		return fmt.Errorf("load endpoint: %w", err)
	}
	if !ep.Enabled {
		return problem.Fail(endpoints.ErrEndpointDisabled, "endpoint %s is disabled; enable it first", endpointID)
	}
	return nil
}

// TestQueued is the answer to a test event (docs/integration-api.md).
type TestQueued struct {
	DeliveryID uuid.UUID     `json:"delivery_id"`
	EndpointID uuid.UUID     `json:"endpoint_id"`
	EventType  string        `json:"event_type"`
	Status     models.Status `json:"status"`
	// DispatchID is the queued start, for the caller that starts it at once.
	DispatchID uuid.UUID `json:"-"`
}

// testData is the synthetic event's data; the event has no id (X-PC-Event-Id: null).
type testData struct {
	EndpointID uuid.UUID `json:"endpoint_id"`
	Message    string    `json:"message"`
}

// SendTest queues a webhook.test event for one endpoint of org. Its row is written by the outbox's
// WriteEvents like every event (the delivery activity loads bodies by id), born dispatched because
// the test's own queued start, not the event relay, delivers it, to this endpoint only.
func (s *Service) SendTest(ctx context.Context, orgID, endpointID uuid.UUID) (*TestQueued, error) {
	return s.sendTest(ctx, orgID, endpointID, nil)
}

// SendTestAs is SendTest pressed by an operator (the console's Send test): the audit log records who,
// in the same transaction. budget, when not nil, is asked only once the endpoint is known to be the
// org's and enabled, so another org's request never spends an endpoint's budget (nor grows what
// counts it); its error is the answer and leaves nothing written.
func (s *Service) SendTestAs(ctx context.Context, orgID, endpointID, actorID uuid.UUID, budget func() error) (*TestQueued, error) {
	return s.sendTest(ctx, orgID, endpointID, func(tx *gorm.DB) error {
		if budget != nil {
			if err := budget(); err != nil {
				return err
			}
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: orgID, ActorID: actorID, Action: "webhook_endpoint.test",
			TargetType: "webhook_endpoint", TargetID: endpointID})
	})
}

func (s *Service) sendTest(ctx context.Context, orgID, endpointID uuid.UUID, audit func(tx *gorm.DB) error) (*TestQueued, error) {
	out := TestQueued{DeliveryID: uuid.New(), EndpointID: endpointID, EventType: events.WebhookTest, Status: models.StatusEnqueued}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := liveEnabled(ctx, tx, endpointID, orgID); err != nil {
			return err
		}
		if audit != nil {
			if err := audit(tx); err != nil {
				return err
			}
		}
		ev, err := outbox.NewEvent(orgID, nil, events.WebhookTest,
			testData{EndpointID: endpointID, Message: "This is a test event from Workspace Data Service."})
		if err != nil {
			return err
		}
		if _, err := outbox.WriteEvents(ctx, tx, []outbox.PendingEvent{ev}); err != nil {
			return fmt.Errorf("write test event: %w", err)
		}
		disp := models.Dispatch{ID: uuid.New(), OrgID: orgID, Kind: models.DispatchTest,
			WorkflowID: contract.TestWorkflowID(out.DeliveryID), EventID: ev.ID, EndpointID: endpointID,
			ChainID: uuid.New(), DeliveryID: &out.DeliveryID}
		if _, err := dispatch.Queue(ctx, tx, &disp); err != nil {
			return err
		}
		out.DispatchID = disp.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
