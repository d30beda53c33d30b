// A store's vendors (the CRM's suppliers) and the tokens they claim their profile with.

package models

import (
	"time"

	"github.com/google/uuid"
)

// Vendor is a supplier of a store. ClaimedAt and ClaimedByEmail are set once the supplier claims its
// profile with a VendorClaimToken.
type Vendor struct {
	ID             uuid.UUID
	OrgID          uuid.UUID
	StoreID        uuid.UUID
	Name           string
	Email          *string
	Phone          *string
	Notes          *string
	ClaimedAt      *time.Time
	ClaimedByEmail *string
	CreatedAt      time.Time `gorm:"default:clock_timestamp()"`
	UpdatedAt      time.Time `gorm:"default:clock_timestamp()"`
}

// VendorClaimToken is the single-use token an owner or admin issued for a vendor, stored only as its
// SHA-256; a new token replaces the vendor's previous one (one row per vendor).
type VendorClaimToken struct {
	VendorID  uuid.UUID `gorm:"primaryKey"`
	TokenHash []byte
	ExpiresAt time.Time
	UsedAt    *time.Time
	CreatedBy uuid.UUID
	CreatedAt time.Time `gorm:"default:clock_timestamp()"`
}
