// Package events is the event catalog: every type an endpoint may subscribe to, when it fires, and the
// JSON Schema (draft 2020-12) of the whole body delivered for it. The schemas in schemas/ are the one
// source: GET /v1/event-types serves them and the tests validate every emitted body against them.
// The body's envelope is webhook.Event, the type wds encodes it with; the schemas' envelope is tested
// against that type (envelope_test.go).
package events

import (
	"slices"
	"strings"
)

// Event types: the contract's catalog plus the two types inbound writes emit.
const (
	OrderCreated          = "order.created"
	OrderShipped          = "order.shipped"
	OrderDelivered        = "order.delivered"
	OrderCancelled        = "order.cancelled"
	ClientCreated         = "client.created"
	ClientUpdated         = "client.updated"
	VendorCreated         = "vendor.created"
	VendorUpdated         = "vendor.updated"
	VendorClaimed         = "vendor.claimed"
	PaymentRecorded       = "payment.recorded"
	PaymentRefunded       = "payment.refunded"
	ShipmentTrackingAdded = "shipment.tracking_added"
	WebhookTest           = "webhook.test"
	// WebhookEndpointDisabled tells an org's other endpoints that the service disabled one for failing.
	WebhookEndpointDisabled = "webhook.endpoint_disabled"
)

// Kind describes one event type: what fires it and which resource its data carries.
type Kind struct {
	Type        string
	Description string
	// data names the definition in schemas/resources.json that the body's data holds.
	data string
}

// kinds is the catalog in the order it is listed everywhere.
var kinds = []Kind{
	{OrderCreated, "A new order is created from any source: the Integration API, the store-native receiver or an operator (app orders). Data: the order.", "order"},
	{OrderShipped, "An order is marked shipped: its fulfillment_status first becomes shipped. Data: {order, shipment}.", "shipmentEvent"},
	{OrderDelivered, "A carrier reports the order's last undelivered shipment delivered: fulfillment_status becomes delivered. Data: {order, shipment}.", "shipmentEvent"},
	{OrderCancelled, "An order is cancelled (Integration API, store-native receiver). Data: the order.", "order"},
	{ClientCreated, "A client is added to the CRM: by an operator, a client upsert or an order's client block. Data: the client.", "client"},
	{ClientUpdated, "A stored field of a client changes. Data: the client.", "client"},
	{VendorCreated, "A supplier is added to the supplier CRM. Data: the vendor.", "vendor"},
	{VendorUpdated, "A stored field of a supplier changes. Data: the vendor.", "vendor"},
	{VendorClaimed, "A vendor profile is claimed through the claim-token flow. Data: the vendor.", "vendor"},
	{PaymentRecorded, "A payment is recorded against an order (inline with a create, or later). Data: {payment, order}.", "paymentEvent"},
	{PaymentRefunded, "A payment is refunded in full. Data: {payment, order}.", "paymentEvent"},
	{ShipmentTrackingAdded, "A tracking number new to a shipment is attached to it. Data: {order, shipment}.", "shipmentEvent"},
	{WebhookEndpointDisabled, "The service disabled an endpoint of the org because it had not succeeded for WDS_WEBHOOK_DISABLE_AFTER when a chain dropped; sent to the org's other enabled endpoints subscribed to it. Data: the endpoint as the Operator API shows it (its URL without the query string, header values blanked) plus reason: failing.", "endpointDisabled"},
	{WebhookTest, "A synthetic test event from Send test or POST /v1/webhooks/test/{endpoint_id}; its id is null. Data: {endpoint_id, message}.", "testData"},
}

// Catalog lists every event type, in catalog order.
func Catalog() []Kind { return slices.Clone(kinds) }

// Types lists every event type's name, in catalog order.
func Types() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Type
	}
	return out
}

// Known reports whether typ is in the catalog.
func Known(typ string) bool {
	return slices.ContainsFunc(kinds, func(k Kind) bool { return k.Type == typ })
}

// Names is the catalog as a comma-separated list, for error details.
func Names() string { return strings.Join(Types(), ", ") }
