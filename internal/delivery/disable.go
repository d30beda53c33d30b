package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wds/internal/events"
	"wds/internal/outbox"
	"wds/internal/platform/egress"
	"wds/internal/workspace"
	"wds/models"
)

// disabledEndpoint is the data of webhook.endpoint_disabled: the endpoint as the Operator API shows
// it, with its URL redacted (no query string, which may hold a token) and its header values blanked
// (they may be credentials, and the event goes to other receivers), and why.
type disabledEndpoint struct {
	models.Endpoint
	Reason string `json:"reason"`
}

// DisableIfFailing disables the endpoint for failing when it has had no successful attempt for at
// least after since its first failure (and is still enabled), as its row keeps it: in one transaction it turns it off,
// drops its pending chains, writes the audit row (no actor: the service did it) and the
// webhook.endpoint_disabled event for the org's other endpoints, and returns the events to start.
func DisableIfFailing(ctx context.Context, db *gorm.DB, endpointID uuid.UUID, after time.Duration, now time.Time) (targeted []uuid.UUID, err error) {
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var ep models.Endpoint
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ? AND enabled AND deleted_at IS NULL", endpointID).Take(&ep).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("lock endpoint: %w", err)
		}
		// The row kept its health (RecordAttempt): the decision reads nothing else.
		since := ep.FailingSince
		if since == nil || now.Sub(*since) < after {
			return nil
		}
		if err := FillHealth(ctx, tx, &ep); err != nil { // for the event's data
			return err
		}
		if err := tx.Model(&ep).Updates(map[string]any{"enabled": false, "disabled_reason": models.DisabledFailing}).Error; err != nil {
			return fmt.Errorf("disable endpoint: %w", err)
		}
		ep.Enabled, ep.DisabledReason = false, ptr(models.DisabledFailing)
		if _, err := DropPendingChains(ctx, tx, ep.ID, models.ReasonEndpointDisabled); err != nil {
			return err
		}
		err = workspace.AuditAct(ctx, tx, workspace.Act{OrgID: ep.OrgID, Action: "endpoint.auto_disabled",
			TargetType: "webhook_endpoint", TargetID: ep.ID,
			Details: map[string]any{"failing_since": since, "disable_after": after.String()}})
		if err != nil {
			return err
		}
		view := ep
		view.URL = egress.RedactURL(ep.URL)
		view.Headers = ep.Headers.Masked()
		ev, err := outbox.NewEvent(ep.OrgID, nil, events.WebhookEndpointDisabled, disabledEndpoint{Endpoint: view, Reason: models.DisabledFailing})
		if err != nil {
			return err
		}
		targeted, err = outbox.WriteEvents(ctx, tx, []outbox.PendingEvent{ev})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("auto-disable endpoint %s: %w", endpointID, err)
	}
	return targeted, nil
}

func ptr[T any](v T) *T { return &v }
