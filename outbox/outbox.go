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

// New makes an event whose data is the resource as the Read API shows it. Write inserts it, in the
// transaction that writes the change.
func New(orgID uuid.UUID, storeID *uuid.UUID, typ string, data any) (models.Event, error) {
	id := uuid.New()
	now := time.Now().UTC()
	raw, err := json.Marshal(body{ID: id, Type: typ, CreatedAt: now.Format(time.RFC3339Nano), OrgID: orgID, StoreID: storeID, Data: data})
	if err != nil {
		return models.Event{}, fmt.Errorf("encode %s event: %w", typ, err)
	}
	return models.Event{ID: id, OrgID: orgID, StoreID: storeID, Type: typ, Body: raw, CreatedAt: now}, nil
}

// Write inserts events in one statement: a write that announces several changes (a new client, its
// order, the order's payment) pays one round trip for all of them.
func Write(ctx context.Context, tx *gorm.DB, events []models.Event) error {
	if len(events) == 0 {
		return nil
	}
	if err := tx.WithContext(ctx).Create(&events).Error; err != nil {
		return fmt.Errorf("write %d events: %w", len(events), err)
	}
	return nil
}

// Emit inserts one event and returns its id for the after-commit start.
func Emit(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, storeID *uuid.UUID, typ string, data any) (uuid.UUID, error) {
	ev, err := New(orgID, storeID, typ, data)
	if err != nil {
		return uuid.Nil, err
	}
	return ev.ID, Write(ctx, tx, []models.Event{ev})
}
