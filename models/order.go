// An order and what hangs off it: its lines, payments and shipments. Ingest writes these tables with
// batched SQL and package order reads them into the order's view; these are the tables' models, and
// the statuses they hold are package order's.

package models

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Order is an order of a store. Number is per org (from the org's sequence); the API shows it as a
// string. Status is the payment life (order.Invoiced, ...), FulfillmentStatus the shipments'
// (order.Unfulfilled, ...), SourceKind where it came from (order.SourceApp or order.SourceIntegration).
type Order struct {
	ID                     uuid.UUID
	OrgID                  uuid.UUID
	StoreID                uuid.UUID
	Number                 int64
	ClientID               *uuid.UUID
	ExternalID             *string
	Currency               string `gorm:"type:char(3)"`
	SubtotalCents          int64
	ShippingCents          int64
	TaxCents               int64
	TotalCents             int64
	AmountPaidCents        int64
	Status                 string
	FulfillmentStatus      string          `gorm:"default:unfulfilled"`
	Metadata               json.RawMessage `gorm:"type:jsonb;default:'{}'"`
	SourceKind             string          `gorm:"default:app"`
	SourceIntegrationKeyID *uuid.UUID
	SourceLabel            *string
	CreatedAt              time.Time `gorm:"default:clock_timestamp()"`
	UpdatedAt              time.Time `gorm:"default:clock_timestamp()"`
	CancelledAt            *time.Time
}

// OrderLine is a line of an order, at its position (from 0) among the order's lines.
type OrderLine struct {
	OrderID        uuid.UUID `gorm:"primaryKey"`
	Position       int       `gorm:"primaryKey;autoIncrement:false"`
	Description    string
	Quantity       int64
	UnitPriceCents int64
	Metadata       json.RawMessage `gorm:"type:jsonb;default:'{}'"`
}

// Payment is a payment of an order; a refund sets RefundedAt.
type Payment struct {
	ID                uuid.UUID
	OrderID           uuid.UUID
	ExternalID        *string
	AmountCents       int64
	Method            string
	Provider          string
	ProviderPaymentID string
	PaidAt            time.Time `gorm:"default:clock_timestamp()"`
	RefundedAt        *time.Time
	CreatedAt         time.Time `gorm:"default:clock_timestamp()"`
}

// Shipment is one parcel of an order. Its Status is order.Shipped until it arrives (order.Delivered,
// with DeliveredAt).
type Shipment struct {
	ID             uuid.UUID
	OrgID          uuid.UUID
	OrderID        uuid.UUID
	Carrier        string
	TrackingNumber *string
	Status         string    `gorm:"default:shipped"`
	ShippedAt      time.Time `gorm:"default:clock_timestamp()"`
	DeliveredAt    *time.Time
	CreatedAt      time.Time `gorm:"default:clock_timestamp()"`
	UpdatedAt      time.Time `gorm:"default:clock_timestamp()"`
}
