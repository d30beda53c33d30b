package main

import (
	"context"
	"flag"
	"time"

	"github.com/google/uuid"

	"wds/internal/fulfillment"
	"wds/internal/order"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
)

func init() {
	registerAdmin("order ship", "ship an order (order.shipped), by its id or, with --org, its number", orderShip)
	registerAdmin("shipment track", "add or change a shipment's tracking number", shipmentTrack)
	registerAdmin("shipment deliver", "mark a shipment delivered (order.delivered once all are)", shipmentDeliver)
}

// shippingOps is what the shipment commands call (fulfillment.Service).
type shippingOps interface {
	ShipOrder(ctx context.Context, actor, orderID uuid.UUID, in fulfillment.Ship) (*order.Shipment, error)
	AddTracking(ctx context.Context, actor, shipmentID uuid.UUID, tracking string, carrier *string) (*order.Shipment, error)
	MarkDelivered(ctx context.Context, actor, shipmentID uuid.UUID, deliveredAt *time.Time) (*order.Shipment, error)
}

// orderShip is `wds admin order ship --id --actor --carrier [--org] [--tracking] [--shipped-at]`; --id
// takes the order's id, or its number with --org, as `event list --order` does.
func orderShip(fs *flag.FlagSet) runFunc {
	ref, actor, carrier := stringFlag(fs, "id", "the order's id, or its number with --org"), uuidFlag(fs, "actor", "acting user id"),
		stringFlag(fs, "carrier", "carrier name")
	orgFlag := fs.String("org", "", "org id: needed when --id is the order's number")
	tracking, shippedAt := fs.String("tracking", "", "tracking number"), fs.String("shipped-at", "", "RFC 3339 (default now)")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		at, err := optionalTime("shipped-at", *shippedAt)
		if err != nil {
			return nil, err
		}
		var org *uuid.UUID
		if *orgFlag != "" {
			o, err := uuid.Parse(*orgFlag)
			if err != nil {
				return nil, problem.Fail(paging.ErrInvalidParameter, "--org must be a UUID")
			}
			org = &o
		}
		id, err := orderID(ctx, env, "id", *ref, org)
		if err != nil {
			return nil, err
		}
		in := fulfillment.Ship{Carrier: *carrier, ShippedAt: at}
		if *tracking != "" {
			in.TrackingNumber = tracking
		}
		res, err := env.shipping.ShipOrder(ctx, *actor, id, in)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// shipmentTrack is `wds admin shipment track --id --actor --tracking [--carrier]`.
func shipmentTrack(fs *flag.FlagSet) runFunc {
	id, actor, tracking := uuidFlag(fs, "id", "shipment id"), uuidFlag(fs, "actor", "acting user id"), stringFlag(fs, "tracking", "tracking number")
	carrier := fs.String("carrier", "", "corrected carrier name")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		var c *string
		if *carrier != "" {
			c = carrier
		}
		res, err := env.shipping.AddTracking(ctx, *actor, *id, *tracking, c)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// shipmentDeliver is `wds admin shipment deliver --id --actor [--delivered-at]`.
func shipmentDeliver(fs *flag.FlagSet) runFunc {
	id, actor, deliveredAt := uuidFlag(fs, "id", "shipment id"), uuidFlag(fs, "actor", "acting user id"), fs.String("delivered-at", "", "RFC 3339 (default now)")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		at, err := optionalTime("delivered-at", *deliveredAt)
		if err != nil {
			return nil, err
		}
		res, err := env.shipping.MarkDelivered(ctx, *actor, *id, at)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}
