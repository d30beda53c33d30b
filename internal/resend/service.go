// Package resend is the support desk's manual starts of chains: a dropped delivery re-fired
// (refire.go), an event resent to one endpoint or to every endpoint subscribed to it (resend.go),
// every event of an order resent to an endpoint (resend_order.go) and a test event sent to one
// (test_event.go). Each queues a fresh chain
// (attempt 1, the same event id and body) in webhook_dispatches, numbered by the event and
// endpoint's counter, and starts it after commit; a recovery re-fires an outage's drops in
// batches (packages recovery and delivery).
package resend

import (
	"gorm.io/gorm"
)

// Service queues re-fires and resends over db; dispatcher starts the chains a resend queues, after
// commit (nil leaves them to the worker's relay).
type Service struct {
	db         *gorm.DB
	dispatcher DispatchStarter
}

// NewService is the re-fires and resends over db, started by dispatcher (nil: the relay).
func NewService(db *gorm.DB, dispatcher DispatchStarter) *Service {
	return &Service{db: db, dispatcher: dispatcher}
}
