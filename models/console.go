// The operator console's sign-in sessions.

package models

import (
	"time"

	"github.com/google/uuid"
)

// ConsoleSession is a stored console session: the SHA-256 of the id its cookie holds, never the id,
// so a copy of the database signs nobody in. It works in one org at a time.
type ConsoleSession struct {
	IDHash    []byte `gorm:"primaryKey"`
	UserID    uuid.UUID
	OrgID     uuid.UUID
	CreatedAt time.Time `gorm:"default:clock_timestamp()"`
	ExpiresAt time.Time
}
