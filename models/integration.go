// What an integration key's writes leave behind besides the rows they write: the external ids it
// claimed, and its Idempotency-Key cache.

package models

import (
	"time"

	"github.com/google/uuid"
)

// ExternalRef maps an integration key's external id of an entity (its EntityType: order, payment or
// client) to the entity's id. The primary key is the final word when creates of one external id race.
type ExternalRef struct {
	IntegrationKeyID uuid.UUID `gorm:"primaryKey"`
	EntityType       string    `gorm:"primaryKey"`
	ExternalID       string    `gorm:"primaryKey"`
	InternalID       uuid.UUID
	CreatedAt        time.Time `gorm:"default:now()"`
}

// IdempotencyKey is an Idempotency-Key's entry: the request it was first used for (BodySHA256) and
// the answer it replays. Status is nil while the first request still executes; ResponseBody then
// holds that claim's token.
type IdempotencyKey struct {
	IntegrationKeyID uuid.UUID `gorm:"primaryKey"`
	Key              string    `gorm:"primaryKey"`
	BodySHA256       []byte
	Status           *int
	ResponseBody     []byte
	CreatedAt        time.Time `gorm:"default:now()"`
	ExpiresAt        time.Time
}
