// Package fulfillment ships orders (docs/cli.md, Workspace operations): a shipment leaves, gains a tracking number,
// and is reported delivered. The order keeps its fulfillment_status (unfulfilled, shipped,
// delivered) in step. The Operator API, the console and `wds admin` all call its Service; each
// operation writes its rows, its events and its audit row in one transaction, starts the events once
// it has committed, and a call that changes nothing emits nothing.
//
// Every operation locks the order row first and then the shipment, so concurrent reports about one
// order take turns in the same order and the database, not a check in Go, decides who changed what:
// of twenty concurrent "delivered" reports for one shipment, one delivers it and nineteen find it
// delivered.
package fulfillment

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/order"
	"wds/internal/outbox"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// maxText bounds a carrier name and a tracking number, in characters.
const maxText = 100

// Service runs the fulfillment operations over the database.
type Service struct {
	db     *gorm.DB
	events EventStarter
}

// EventStarter starts webhook delivery of events already committed to the outbox (worker.Starter).
// It must not fail the write: what it cannot start now the worker's relay starts after its grace.
type EventStarter interface {
	StartEvents(ctx context.Context, eventIDs []uuid.UUID)
}

// NewService is the operations over db; events nil leaves every event to the worker's relay.
func NewService(db *gorm.DB, events EventStarter) *Service {
	return &Service{db: db, events: events}
}

// shipmentEvent is the data of order.shipped, order.delivered and shipment.tracking_added.
type shipmentEvent struct {
	Order    *order.Order   `json:"order"`
	Shipment order.Shipment `json:"shipment"`
}

// change is one operation's transaction: the order it locked, and what it announces.
type change struct {
	ctx    context.Context
	tx     *gorm.DB
	order  lockedOrder
	events []outbox.PendingEvent
}

type lockedOrder struct {
	ID                uuid.UUID
	OrgID             uuid.UUID
	StoreID           uuid.UUID
	Status            string
	FulfillmentStatus string
}

// run locks the order, checks the actor may work on it, runs fn, writes the events fn announced and,
// once committed, starts them.
func (s *Service) run(ctx context.Context, actor, orderID uuid.UUID, fn func(c *change) error) error {
	var ids []uuid.UUID
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rows []lockedOrder
		if err := tx.Raw(`SELECT id, org_id, store_id, status, fulfillment_status FROM orders WHERE id = ? FOR UPDATE`, orderID).
			Find(&rows).Error; err != nil {
			return fmt.Errorf("lock order: %w", err)
		}
		if len(rows) == 0 {
			return problem.Fail(problem.NotFound, "order %s not found", orderID)
		}
		if err := workspace.RequireRowRole(ctx, tx, rows[0].OrgID, actor, "order", orderID, workspace.Anyone...); err != nil {
			return err
		}
		c := &change{ctx: ctx, tx: tx, order: rows[0]}
		if err := fn(c); err != nil {
			return err
		}
		var err error
		ids, err = outbox.WriteEvents(ctx, tx, c.events)
		return err
	})
	if err != nil {
		return err
	}
	if s.events != nil && len(ids) > 0 {
		s.events.StartEvents(ctx, ids)
	}
	return nil
}

// orderOf finds a shipment's order without locking: run locks the order, then the operation its
// shipment, always in that order.
func orderOf(ctx context.Context, db *gorm.DB, shipmentID uuid.UUID) (uuid.UUID, error) {
	var ids []uuid.UUID
	if err := db.WithContext(ctx).Raw(`SELECT order_id FROM shipments WHERE id = ?`, shipmentID).Find(&ids).Error; err != nil {
		return uuid.Nil, fmt.Errorf("find shipment: %w", err)
	}
	if len(ids) == 0 {
		return uuid.Nil, problem.Fail(problem.NotFound, "shipment %s not found", shipmentID)
	}
	return ids[0], nil
}

// setFulfillment writes the order's status; writing it even unchanged advances the order's
// updated_at, as every change to an order's shipments must.
func (c *change) setFulfillment(status string) error {
	if err := order.SetFulfillment(c.ctx, c.tx, c.order.ID, status); err != nil {
		return err
	}
	c.order.FulfillmentStatus = status
	return nil
}

// announce loads the order as it now is and emits typ with {order, shipment}; the shipment as the
// order shows it is returned.
func (c *change) announce(shipmentID uuid.UUID, types ...string) (order.Shipment, error) {
	o, err := order.Get(c.ctx, c.tx, paging.Scope{OrgID: c.order.OrgID}, c.order.ID)
	if err != nil {
		return order.Shipment{}, err
	}
	ss, err := o.ShipmentList()
	if err != nil {
		return order.Shipment{}, err
	}
	for _, s := range ss {
		if s.ID != shipmentID {
			continue
		}
		for _, typ := range types {
			store := c.order.StoreID
			ev, err := outbox.NewEvent(c.order.OrgID, &store, typ, shipmentEvent{Order: o, Shipment: s})
			if err != nil {
				return order.Shipment{}, err
			}
			c.events = append(c.events, ev)
		}
		return s, nil
	}
	return order.Shipment{}, fmt.Errorf("shipment %s is not among order %s's", shipmentID, c.order.ID)
}

func (c *change) audit(actor uuid.UUID, action string, shipmentID uuid.UUID, details map[string]any) error {
	details["order_id"] = c.order.ID
	return workspace.Audit(c.ctx, c.tx, models.AuditEntry{OrgID: c.order.OrgID, ActorID: actor, Action: action,
		TargetType: "shipment", TargetID: shipmentID, Details: details})
}

// text checks a carrier name or tracking number: trimmed, 1 to 100 characters, printable.
func text(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return "", problem.Fail(problem.Invalid, "%s must not be empty", field)
	case !utf8.ValidString(v) || utf8.RuneCountInString(v) > maxText:
		return "", problem.Fail(problem.Invalid, "%s must be at most %d characters of text", field, maxText)
	case strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", problem.Fail(problem.Invalid, "%s must not hold control characters", field)
	}
	return v, nil
}

// notAfterNow refuses a time more than a day ahead: a report of the future is a typo.
func notAfterNow(field string, t *time.Time) error {
	if t != nil && t.After(time.Now().Add(24*time.Hour)) {
		return problem.Fail(problem.Invalid, "%s is in the future", field)
	}
	return nil
}
