package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/fulfillment"
	"wds/internal/order"
)

// ShippingStore ships orders and records their tracking and delivery (fulfillment).
type ShippingStore interface {
	ShipOrder(ctx context.Context, actor, orderID uuid.UUID, in fulfillment.Ship) (*order.Shipment, error)
	AddTracking(ctx context.Context, actor, shipmentID uuid.UUID, tracking string, carrier *string) (*order.Shipment, error)
	MarkDelivered(ctx context.Context, actor, shipmentID uuid.UUID, deliveredAt *time.Time) (*order.Shipment, error)
}

// registerOperatorFulfillment mounts shipping (docs/cli.md, Workspace operations): ship an order, attach tracking,
// report a delivery. Any member of the order's org may; the rules live in fulfillment.
func (s *server) registerOperatorFulfillment(r *gin.Engine) {
	g := s.operatorGroup(r)
	g.POST("/orders/:id/shipments", s.shipOrder)
	g.POST("/shipments/:id/tracking", s.addTracking)
	g.POST("/shipments/:id/delivered", s.markDelivered)
}

// shipBody is POST /admin/v1/orders/{id}/shipments.
type shipBody struct {
	Carrier        string  `json:"carrier"`
	TrackingNumber *string `json:"tracking_number"`
	ShippedAt      *string `json:"shipped_at"`
}

func (s *server) shipOrder(c *gin.Context) {
	id, ok := pathID(c, "order")
	if !ok {
		return
	}
	var b shipBody
	if err := readObject(c, &b); err != nil {
		fail(c, err)
		return
	}
	at, err := bodyTime("shipped_at", b.ShippedAt)
	if err != nil {
		fail(c, err)
		return
	}
	res, err := s.Shipping.ShipOrder(c.Request.Context(), actorOf(c), id,
		fulfillment.Ship{Carrier: b.Carrier, TrackingNumber: b.TrackingNumber, ShippedAt: at})
	s.answerShipment(c, http.StatusCreated, res, err)
}

// trackingBody is POST /admin/v1/shipments/{id}/tracking.
type trackingBody struct {
	TrackingNumber string  `json:"tracking_number"`
	Carrier        *string `json:"carrier"`
}

func (s *server) addTracking(c *gin.Context) {
	id, ok := pathID(c, "shipment")
	if !ok {
		return
	}
	var b trackingBody
	if err := readObject(c, &b); err != nil {
		fail(c, err)
		return
	}
	res, err := s.Shipping.AddTracking(c.Request.Context(), actorOf(c), id, b.TrackingNumber, b.Carrier)
	s.answerShipment(c, http.StatusOK, res, err)
}

// deliveredBody is POST /admin/v1/shipments/{id}/delivered; the body may be empty.
type deliveredBody struct {
	DeliveredAt *string `json:"delivered_at"`
}

func (s *server) markDelivered(c *gin.Context) {
	id, ok := pathID(c, "shipment")
	if !ok {
		return
	}
	var b deliveredBody
	if err := readObject(c, &b); err != nil {
		fail(c, err)
		return
	}
	at, err := bodyTime("delivered_at", b.DeliveredAt)
	if err != nil {
		fail(c, err)
		return
	}
	res, err := s.Shipping.MarkDelivered(c.Request.Context(), actorOf(c), id, at)
	s.answerShipment(c, http.StatusOK, res, err)
}

// answerShipment renders a shipment operation's outcome.
func (s *server) answerShipment(c *gin.Context, status int, res *order.Shipment, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(status, res)
}
