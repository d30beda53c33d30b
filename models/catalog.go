// The marketplace's rows: sellers, their links to an org's stores, and their products.

package models

import (
	"time"

	"github.com/google/uuid"
)

// Seller is a marketplace party whose published products an org sees through a SellerLink.
type Seller struct {
	ID        uuid.UUID
	Name      string
	CreatedAt time.Time `gorm:"default:now()"`
}

// SellerLink ties a seller to one store of an org.
type SellerLink struct {
	OrgID     uuid.UUID `gorm:"primaryKey"`
	SellerID  uuid.UUID `gorm:"primaryKey"`
	StoreID   uuid.UUID
	CreatedAt time.Time `gorm:"default:now()"`
}

// Product is a seller's shop product.
type Product struct {
	ID         uuid.UUID
	SellerID   uuid.UUID
	Name       string
	SKU        *string `gorm:"column:sku"`
	PriceCents int64
	Currency   string
	Published  bool
	CreatedAt  time.Time `gorm:"default:clock_timestamp()"`
	UpdatedAt  time.Time `gorm:"default:clock_timestamp()"`
}
