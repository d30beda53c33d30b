// Package outbox writes event rows in the caller's transaction, so an event exists exactly when the
// business change that causes it is committed (DESIGN.md rule 1). Delivery reads them back by id.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/models"
)

// Event types (service-spec.md "Event catalog", plus the two inbound-write types).
const (
	OrderCreated    = "order.created"
	OrderCancelled  = "order.cancelled"
	PaymentRecorded = "payment.recorded"
	PaymentRefunded = "payment.refunded"
	ClientCreated   = "client.created"
	ClientUpdated   = "client.updated"
	WebhookTest     = "webhook.test"
)

// body is the delivered JSON (decisions.md §6); field order is fixed by the struct.
type body struct {
	ID        uuid.UUID  `json:"id"`
	Type      string     `json:"type"`
	CreatedAt string     `json:"created_at"`
	OrgID     uuid.UUID  `json:"org_id"`
	StoreID   *uuid.UUID `json:"store_id"`
	Data      any        `json:"data"`
}

// Emit inserts one event whose data is the resource as the Read API shows it. Call it with the
// transaction that writes the change; it returns the event id for the after-commit start.
func Emit(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, storeID *uuid.UUID, typ string, data any) (uuid.UUID, error) {
	id := uuid.New()
	now := time.Now().UTC()
	raw, err := json.Marshal(body{ID: id, Type: typ, CreatedAt: now.Format(time.RFC3339Nano), OrgID: orgID, StoreID: storeID, Data: data})
	if err != nil {
		return uuid.Nil, fmt.Errorf("encode %s event: %w", typ, err)
	}
	ev := models.Event{ID: id, OrgID: orgID, StoreID: storeID, Type: typ, Body: raw, CreatedAt: now}
	if err := tx.WithContext(ctx).Create(&ev).Error; err != nil {
		return uuid.Nil, fmt.Errorf("write %s event: %w", typ, err)
	}
	return id, nil
}
