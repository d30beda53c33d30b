// The outbox: event rows written in the caller's transaction, so an event exists exactly when the
// business change that causes it is committed. Delivery reads them back by id. WriteEvents is the one
// writer of event rows, test events included; each row's body is the webhook.Event delivered.

package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/events"
	"wds/webhook"
)

// PendingEvent is an event of a transaction, not yet written: WriteEvents stamps it with its time.
type PendingEvent struct {
	ID      uuid.UUID
	orgID   uuid.UUID
	storeID *uuid.UUID
	typ     string
	data    json.RawMessage
}

// NewEvent makes an event whose data is the resource as the Read API shows it. WriteEvents inserts it, in the
// transaction that writes the change.
func NewEvent(orgID uuid.UUID, storeID *uuid.UUID, typ string, data any) (PendingEvent, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return PendingEvent{}, fmt.Errorf("encode %s event: %w", typ, err)
	}
	return PendingEvent{ID: uuid.New(), orgID: orgID, storeID: storeID, typ: typ, data: raw}, nil
}

// WriteEvents inserts events in one statement, so a write that announces several changes (a new client,
// its order, the order's payment) pays one round trip for all of them, and returns the ids of those
// an endpoint can receive, for the after-commit start. An event no endpoint is subscribed to when it
// fires is written already dispatched: it needs no workflow, and marking it later would cost the
// request a second statement after commit. A webhook.test event is written dispatched too, with a
// null id (X-PC-Event-Id: null): its own queued start delivers it, to one endpoint.
//
// An event goes to the endpoints created no later than it. Both times are the database's, and the
// event's is taken under the org's endpoints lock (shared; creating an endpoint holds it exclusively),
// so an endpoint still being created is either committed, and seen, before the event's time, or
// created after it.
func WriteEvents(ctx context.Context, tx *gorm.DB, pending []PendingEvent) ([]uuid.UUID, error) {
	if len(pending) == 0 {
		return nil, nil
	}
	now, err := lockEndpoints(ctx, tx, pending)
	if err != nil {
		return nil, err
	}
	values := make([]string, len(pending))
	// the CASE's type comes first in the statement, then the values
	args := append(make([]any, 0, 1+6*len(pending)), events.WebhookTest)
	for i, e := range pending {
		// A microsecond apart, PostgreSQL's resolution: events keep their emission order in time.
		at := now.Add(time.Duration(i) * time.Microsecond)
		raw, err := json.Marshal(e.body(at))
		if err != nil {
			return nil, fmt.Errorf("encode %s event: %w", e.typ, err)
		}
		values[i] = "(?::uuid, ?::uuid, ?::uuid, ?::text, ?::json, ?::timestamptz)"
		args = append(args, e.ID, e.orgID, e.storeID, e.typ, string(raw), at)
	}
	var rows []written
	err = tx.WithContext(ctx).Raw(`INSERT INTO events (id, org_id, store_id, type, body, created_at, dispatched_at)
		SELECT v.id, v.org_id, v.store_id, v.type, v.body, v.created_at,
			CASE WHEN v.type <> ? AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE `+
		subscribedAtEventTime("v.org_id", "v.type", "v.created_at")+`) THEN NULL ELSE clock_timestamp() END
		FROM (VALUES `+strings.Join(values, ", ")+`) AS v (id, org_id, store_id, type, body, created_at)
		RETURNING id, dispatched_at IS NULL AS targeted`, args...).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("write %d events: %w", len(pending), err)
	}
	var targeted []uuid.UUID
	for _, e := range pending { // in the order they were emitted, which RETURNING does not promise
		if slices.Contains(rows, written{ID: e.ID, Targeted: true}) {
			targeted = append(targeted, e.ID)
		}
	}
	return targeted, nil
}

// body is the event as delivered, written at.
func (e PendingEvent) body(at time.Time) webhook.Event {
	b := webhook.Event{Type: e.typ, CreatedAt: at.UTC(), OrgID: e.orgID.String(), Data: e.data}
	if e.typ != events.WebhookTest {
		id := e.ID.String()
		b.ID = &id
	}
	if e.storeID != nil {
		store := e.storeID.String()
		b.StoreID = &store
	}
	return b
}

// lockEndpoints takes the events' orgs' endpoints locks, shared, and returns the database's time
// after them: the events' time.
func lockEndpoints(ctx context.Context, tx *gorm.DB, pending []PendingEvent) (time.Time, error) {
	var orgs []string
	for _, e := range pending {
		if !slices.Contains(orgs, e.orgID.String()) {
			orgs = append(orgs, e.orgID.String())
		}
	}
	slices.Sort(orgs) // one order for every writer
	var now time.Time
	err := tx.WithContext(ctx).Raw(`SELECT max(t) FROM (SELECT `+endpointsLock("o", true)+`, clock_timestamp() AS t
		FROM unnest(?::uuid[]) AS o) AS locked`, "{"+strings.Join(orgs, ",")+"}").Row().Scan(&now)
	if err != nil {
		return time.Time{}, fmt.Errorf("lock endpoints: %w", err)
	}
	return now, nil
}

// written is what WriteEvents learns of each row it inserted.
type written struct {
	ID       uuid.UUID
	Targeted bool
}
