// Package outbox writes event rows in the caller's transaction, so an event exists exactly when the
// business change that causes it is committed (an event exists exactly when its change is committed). Delivery reads them back by id.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/models"
)

// body is the delivered JSON (docs/webhooks.md); field order is fixed by the struct.
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

// Write inserts events in one statement, so a write that announces several changes (a new client,
// its order, the order's payment) pays one round trip for all of them, and returns the ids of those
// an endpoint can receive, for the after-commit start. An event no endpoint is subscribed to when it
// fires is written already dispatched: it needs no workflow, and marking it later would cost the
// request a second statement after commit.
func Write(ctx context.Context, tx *gorm.DB, events []models.Event) ([]uuid.UUID, error) {
	if len(events) == 0 {
		return nil, nil
	}
	values := make([]string, len(events))
	args := make([]any, 0, 6*len(events))
	for i, e := range events {
		values[i] = "(?::uuid, ?::uuid, ?::uuid, ?::text, ?::json, ?::timestamptz)"
		args = append(args, e.ID, e.OrgID, e.StoreID, e.Type, string(e.Body), e.CreatedAt)
	}
	var rows []written
	err := tx.WithContext(ctx).Raw(`INSERT INTO events (id, org_id, store_id, type, body, created_at, dispatched_at)
		SELECT v.id, v.org_id, v.store_id, v.type, v.body, v.created_at,
			CASE WHEN EXISTS (SELECT 1 FROM webhook_endpoints w WHERE `+
		models.SubscribedAtEventTime("v.org_id", "v.type", "v.created_at")+`) THEN NULL ELSE clock_timestamp() END
		FROM (VALUES `+strings.Join(values, ", ")+`) AS v (id, org_id, store_id, type, body, created_at)
		RETURNING id, dispatched_at IS NULL AS targeted`, args...).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("write %d events: %w", len(events), err)
	}
	var targeted []uuid.UUID
	for _, e := range events { // in the order they were emitted, which RETURNING does not promise
		if slices.Contains(rows, written{ID: e.ID, Targeted: true}) {
			targeted = append(targeted, e.ID)
		}
	}
	return targeted, nil
}

// written is what Write learns of each row it inserted.
type written struct {
	ID       uuid.UUID
	Targeted bool
}

// Emit inserts one event and returns its id, whether or not an endpoint can receive it.
func Emit(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, storeID *uuid.UUID, typ string, data any) (uuid.UUID, error) {
	ev, err := New(orgID, storeID, typ, data)
	if err != nil {
		return uuid.Nil, err
	}
	_, err = Write(ctx, tx, []models.Event{ev})
	return ev.ID, err
}
