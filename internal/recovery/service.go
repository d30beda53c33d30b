// Package recovery is the support desk's recoveries: after a receiver's outage, count an endpoint's
// dropped chains in a window, start a recovery that re-fires them, show its progress and cancel it.
// The batches themselves are the delivery engine's (package delivery), which the recovery workflow
// runs through activities.
package recovery

import (
	"time"

	"gorm.io/gorm"
)

// Service runs the recoveries over DB.
type Service struct {
	DB *gorm.DB
	// Recoveries starts a recovery's workflow after commit; nil leaves it to the relay.
	Recoveries Starter
	// Retention is WDS_RETENTION: a recovery cannot reach further back; 0 is no bound.
	Retention time.Duration
}

// NewService is the recoveries over db, started by starter (nil: the relay) and reaching back no
// further than retention (0: MaxRecoveryReach).
func NewService(db *gorm.DB, starter Starter, retention time.Duration) *Service {
	return &Service{DB: db, Recoveries: starter, Retention: retention}
}
