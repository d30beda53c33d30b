// A store's clients (the CRM's buyers).

package models

import (
	"time"

	"github.com/google/uuid"
)

// Client is a client of a store as the clients table stores it: the one row type for it, which
// ingest turns into the client's view (ClientView) and reads and compares when it upserts one.
type Client struct {
	ID                     uuid.UUID
	OrgID                  uuid.UUID
	StoreID                uuid.UUID
	Email                  *string
	DisplayName            string
	FirstName              string
	LastName               string
	Phone                  string
	ClientType             string    `gorm:"default:retail"`
	Tags                   TextArray `gorm:"type:text[]"`
	BillingAddress         []byte    `gorm:"type:jsonb"`
	SourceLabel            *string
	SourceExternalID       *string
	SourceIntegrationKeyID *uuid.UUID
	CreatedAt              time.Time `gorm:"default:clock_timestamp()"`
	UpdatedAt              time.Time `gorm:"default:clock_timestamp()"`
}
