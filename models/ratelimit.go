// The integration keys' shared rate limits.

package models

import (
	"time"

	"github.com/google/uuid"
)

// RateLimitHit is how many requests of a key were admitted (or leased) in one second, counted by the
// database functions wds_rate_limit_admit and wds_rate_limit_lease; LastAt is the latest moment a
// request it counts could be spent, so the bucket stops counting 60 seconds after it. The table is
// unlogged: a crash forgets at most a minute of counts.
type RateLimitHit struct {
	KeyID       uuid.UUID `gorm:"primaryKey"`
	EpochSecond int64     `gorm:"primaryKey;autoIncrement:false"`
	N           int
	LastAt      time.Time
}
