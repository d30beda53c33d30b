package metrics

import (
	"time"

	"gorm.io/gorm"
)

// NewOutboxCollectorAt is NewOutboxCollector with a fixed clock, so ages are exact in tests.
func NewOutboxCollectorAt(db *gorm.DB, now func() time.Time) *OutboxCollector {
	c := NewOutboxCollector(db)
	c.now = now
	return c
}
