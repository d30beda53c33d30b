package fulfillment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/order"
	"wds/internal/platform/problem"
)

// Ship is what shipping an order asks for.
type Ship struct {
	Carrier        string
	TrackingNumber *string
	ShippedAt      *time.Time
}

// ShipOrder records a shipment of the order. The order's fulfillment_status becomes shipped;
// order.shipped fires when it first does (an order delivered before and shipping again was shipped
// already), and shipment.tracking_added when a tracking number comes with it.
func (s *Service) ShipOrder(ctx context.Context, actor, orderID uuid.UUID, in Ship) (*order.Shipment, error) {
	var out order.Shipment
	err := s.run(ctx, actor, orderID, func(c *change) error {
		if c.order.Status == order.Cancelled || c.order.Status == order.Refunded {
			return problem.Fail(ErrOrderNotShippable, "order %s is %s; it cannot be shipped", orderID, c.order.Status)
		}
		carrier, err := text("carrier", in.Carrier)
		if err != nil {
			return err
		}
		var tracking *string
		if in.TrackingNumber != nil {
			t, err := text("tracking_number", *in.TrackingNumber)
			if err != nil {
				return err
			}
			tracking = &t
		}
		if err := notAfterNow("shipped_at", in.ShippedAt); err != nil {
			return err
		}
		id := uuid.New()
		if err := c.tx.Exec(`INSERT INTO shipments (id, org_id, order_id, carrier, tracking_number, shipped_at)
			VALUES (?, ?, ?, ?, ?, coalesce(?, clock_timestamp()))`, id, c.order.OrgID, orderID, carrier, tracking, in.ShippedAt).Error; err != nil {
			return fmt.Errorf("insert shipment: %w", err)
		}
		var types []string
		if c.order.FulfillmentStatus == order.Unfulfilled {
			types = append(types, events.OrderShipped)
		}
		if tracking != nil {
			types = append(types, events.ShipmentTrackingAdded)
		}
		if err := c.setFulfillment(order.Shipped); err != nil {
			return err
		}
		if out, err = c.announce(id, types...); err != nil {
			return err
		}
		return c.audit(actor, "shipment.create", id, map[string]any{"carrier": carrier, "tracking_number": tracking != nil})
	})
	if err != nil {
		return nil, fmt.Errorf("ship order: %w", err)
	}
	return &out, nil
}

// shipmentRow is a shipment as an operation reads it, locked.
type shipmentRow struct {
	Carrier        string
	TrackingNumber *string
	Status         string
	ShippedAt      time.Time
}

// lockShipment locks a shipment of the locked order.
func (c *change) lockShipment(id uuid.UUID) (shipmentRow, error) {
	var rows []shipmentRow
	if err := c.tx.Raw(`SELECT carrier, tracking_number, status, shipped_at FROM shipments
		WHERE id = ? AND order_id = ? FOR UPDATE`, id, c.order.ID).Find(&rows).Error; err != nil {
		return shipmentRow{}, fmt.Errorf("lock shipment: %w", err)
	}
	if len(rows) == 0 { // moved to another order between the two statements: it never does
		return shipmentRow{}, problem.Fail(problem.NotFound, "shipment %s not found", id)
	}
	return rows[0], nil
}

// onShipment runs fn on a shipment inside its order's transaction; a shipment of another org is 404.
func (s *Service) onShipment(ctx context.Context, actor, shipmentID uuid.UUID, fn func(c *change, s shipmentRow) error) error {
	orderID, err := orderOf(ctx, s.db, shipmentID)
	if err != nil {
		return err
	}
	err = s.run(ctx, actor, orderID, func(c *change) error {
		row, err := c.lockShipment(shipmentID)
		if err != nil {
			return err
		}
		return fn(c, row)
	})
	if errors.Is(err, problem.NotFound) {
		return problem.Fail(problem.NotFound, "shipment %s not found", shipmentID)
	}
	return err
}

// AddTracking attaches a tracking number (and optionally a carrier) to a shipment. A number new to
// the shipment fires shipment.tracking_added; the same number again changes nothing and fires
// nothing, unless a different carrier comes with it, which is corrected without an event.
func (s *Service) AddTracking(ctx context.Context, actor, shipmentID uuid.UUID, tracking string, carrier *string) (*order.Shipment, error) {
	var out order.Shipment
	err := s.onShipment(ctx, actor, shipmentID, func(c *change, s shipmentRow) error {
		number, err := text("tracking_number", tracking)
		if err != nil {
			return err
		}
		newCarrier := s.Carrier
		if carrier != nil {
			if newCarrier, err = text("carrier", *carrier); err != nil {
				return err
			}
		}
		sameNumber := s.TrackingNumber != nil && *s.TrackingNumber == number
		if sameNumber && newCarrier == s.Carrier {
			out, err = c.announce(shipmentID)
			return err
		}
		if err := c.tx.Exec(`UPDATE shipments SET tracking_number = ?, carrier = ? WHERE id = ?`, number, newCarrier, shipmentID).Error; err != nil {
			return fmt.Errorf("update shipment: %w", err)
		}
		if err := c.setFulfillment(c.order.FulfillmentStatus); err != nil {
			return err
		}
		var types []string
		if !sameNumber {
			types = append(types, events.ShipmentTrackingAdded)
		}
		if out, err = c.announce(shipmentID, types...); err != nil {
			return err
		}
		return c.audit(actor, "shipment.track", shipmentID, map[string]any{"carrier": newCarrier, "new_number": !sameNumber})
	})
	if err != nil {
		return nil, fmt.Errorf("add tracking: %w", err)
	}
	return &out, nil
}

// MarkDelivered records that the carrier delivered a shipment. When it was the order's last
// undelivered shipment the order becomes delivered and order.delivered fires; a shipment already
// delivered changes nothing and fires nothing.
func (s *Service) MarkDelivered(ctx context.Context, actor, shipmentID uuid.UUID, deliveredAt *time.Time) (*order.Shipment, error) {
	var out order.Shipment
	err := s.onShipment(ctx, actor, shipmentID, func(c *change, s shipmentRow) error {
		if s.Status == order.Delivered {
			var err error
			out, err = c.announce(shipmentID)
			return err
		}
		if err := notAfterNow("delivered_at", deliveredAt); err != nil {
			return err
		}
		if deliveredAt != nil && deliveredAt.Before(s.ShippedAt) {
			return problem.Fail(problem.Invalid, "delivered_at is before the shipment's shipped_at")
		}
		var pending int64
		err := c.tx.Raw(`WITH d AS (UPDATE shipments SET status = 'delivered', delivered_at = coalesce(?, clock_timestamp())
			WHERE id = ? RETURNING id)
			SELECT count(*) FROM shipments WHERE order_id = ? AND status = 'shipped' AND id NOT IN (SELECT id FROM d)`,
			deliveredAt, shipmentID, c.order.ID).Find(&pending).Error
		if err != nil {
			return fmt.Errorf("deliver shipment: %w", err)
		}
		status, types := order.Shipped, []string(nil)
		if pending == 0 {
			status, types = order.Delivered, []string{events.OrderDelivered}
		}
		if err := c.setFulfillment(status); err != nil {
			return err
		}
		if out, err = c.announce(shipmentID, types...); err != nil {
			return err
		}
		return c.audit(actor, "shipment.deliver", shipmentID, map[string]any{"order_delivered": pending == 0})
	})
	if err != nil {
		return nil, fmt.Errorf("mark delivered: %w", err)
	}
	return &out, nil
}
