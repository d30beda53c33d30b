// Package outbox writes event rows in the caller's transaction, so an event exists exactly when the
// business change that causes it is committed; the activities read them back by id. WriteEvents (or
// PrepareEvents, for a writer that batches) is the one writer of event rows, test events included;
// each row's body is the webhook.Event delivered. It links no Temporal code: ingest, catalog and
// fulfillment write events through it, and package worker starts them.
package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/platform/database"
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
// created after it. The lock is a statement of its own, before the insert: a statement sees what was
// committed before it started, and the insert must start once the lock is held.
func WriteEvents(ctx context.Context, tx *gorm.DB, pending []PendingEvent) ([]uuid.UUID, error) {
	if len(pending) == 0 {
		return nil, nil
	}
	w, err := PrepareEvents(pending)
	if err != nil {
		return nil, err
	}
	var locked []int64
	if err := tx.WithContext(ctx).Raw(w.Lock, w.LockArgs...).Find(&locked).Error; err != nil {
		return nil, fmt.Errorf("lock endpoints: %w", err)
	}
	var rows []Written
	if err := tx.WithContext(ctx).Raw(w.Insert, w.InsertArgs...).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("write %d events: %w", len(pending), err)
	}
	return w.Targeted(rows), nil
}

// EventWrite is WriteEvents' work as its two statements (SQL with GORM's ? placeholders), for a
// writer that sends them in one round trip with others, in this order: Lock, whose answer it
// ignores, then Insert, whose rows (Written) it passes to Targeted.
type EventWrite struct {
	Lock, Insert         string
	LockArgs, InsertArgs []any
	events               []PendingEvent
}

// PrepareEvents is the EventWrite of pending (at least one). Each event's body is its envelope, whose
// created_at, the event's time, the insert writes in: the database's clock once the lock is held, a
// microsecond apart (PostgreSQL's resolution) so events keep their emission order in time.
func PrepareEvents(pending []PendingEvent) (*EventWrite, error) {
	var orgs []string
	for _, e := range pending {
		if !slices.Contains(orgs, e.orgID.String()) {
			orgs = append(orgs, e.orgID.String())
		}
	}
	slices.Sort(orgs) // one order for every writer
	w := &EventWrite{events: pending,
		Lock:     `SELECT count(*) FROM (SELECT ` + EndpointsLock("o", true) + ` FROM unnest(?::uuid[]) AS o) AS locked`,
		LockArgs: []any{"{" + strings.Join(orgs, ",") + "}"}}
	values := make([]string, len(pending))
	// the CASE's type comes first in the statement, then the values
	w.InsertArgs = append(make([]any, 0, 1+6*len(pending)), events.WebhookTest)
	for i, e := range pending {
		head, tail, err := e.envelope()
		if err != nil {
			return nil, err
		}
		values[i] = "(?::uuid, ?::uuid, ?::uuid, ?::text, ?::text, ?::text, " + strconv.Itoa(i) + ")"
		w.InsertArgs = append(w.InsertArgs, e.ID, e.orgID, database.NullableID(e.storeID), e.typ, head, tail)
	}
	w.Insert = `WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS now)
		INSERT INTO events (id, org_id, store_id, type, body, created_at, dispatched_at)
		SELECT v.id, v.org_id, v.store_id, v.type, (v.head || ` + database.JSONTime("e.at") + ` || v.tail)::json, e.at,
			CASE WHEN v.type <> ? AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE ` +
		SubscribedAtEventTime("v.org_id", "v.type", "e.at") + `) THEN NULL ELSE clock_timestamp() END
		FROM (VALUES ` + strings.Join(values, ", ") + `) AS v (id, org_id, store_id, type, head, tail, n),
			LATERAL (SELECT clock.now + v.n * interval '1 microsecond' AS at FROM clock) AS e
		RETURNING id, dispatched_at IS NULL AS targeted`
	return w, nil
}

// timeSlot stands for the event's time in the body PrepareEvents encodes, which the insert cuts at
// timeSlotJSON and fills with the database's time.
var (
	timeSlot     = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	timeSlotJSON = []byte(`"created_at":"0001-01-01T00:00:00Z"`)
)

// dataSlot stands for the event's data in the envelope encoded, whose data goes in its place as
// NewEvent encoded it.
var dataSlot = []byte(`"data":0}`)

// envelope is the event's body as delivered, cut where the insert writes the event's time: head ends
// with `"created_at":"` and tail starts with the quote that closes it. The data is spliced in as
// NewEvent encoded it, valid and compact: json.Marshal would check and compact it once more, which for
// an order was most of the cost of encoding its events.
func (e PendingEvent) envelope() (head, tail string, err error) {
	b := e.body(timeSlot)
	b.Data = json.RawMessage(`0`)
	raw, err := json.Marshal(b)
	if err != nil {
		return "", "", fmt.Errorf("encode %s event: %w", e.typ, err)
	}
	before, ok := bytes.CutSuffix(raw, dataSlot)
	h, t, cut := bytes.Cut(before, timeSlotJSON)
	if !ok || !cut {
		return "", "", fmt.Errorf("encode %s event: its envelope %s has no created_at or does not end with its data", e.typ, raw)
	}
	return string(h) + `"created_at":"`, `"` + string(t) + `"data":` + string(e.data) + `}`, nil
}

// body is the event as delivered, written at.
func (e PendingEvent) body(at time.Time) webhook.Event {
	b := webhook.Event{Type: e.typ, CreatedAt: at, OrgID: e.orgID.String(), Data: e.data}
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

// Targeted is WriteEvents' answer from the insert's rows: the ids of the events an endpoint can
// receive, in the order they were emitted, which RETURNING does not promise.
func (w *EventWrite) Targeted(rows []Written) []uuid.UUID {
	var targeted []uuid.UUID
	for _, e := range w.events {
		if slices.Contains(rows, Written{ID: e.ID, Targeted: true}) {
			targeted = append(targeted, e.ID)
		}
	}
	return targeted
}

// Written is what an event insert (EventWrite.Insert) answers for each row.
type Written struct {
	ID       uuid.UUID
	Targeted bool
}
