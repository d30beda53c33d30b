// Package eventsearch is the support desk's view of events (docs/support.md): an org's events found
// by the order, resource, type, endpoint or outcome they concern, each with its outcome across its
// endpoints (events.go, outcome.go), and one event with its payload and every chain of it, with
// their attempts as the delivery log shows them (package deliverylog).
package eventsearch

import (
	"gorm.io/gorm"

	"wds/internal/platform/ratelimit"
	"wds/internal/platform/secrets"
)

// Service searches and shows events over db; box opens the custom header values an attempt sent
// (nil: the names alone), and searches paces each org's searches (NewSearchPacer,
// WDS_SUPPORT_SEARCH_RATE; nil: unpaced).
type Service struct {
	db       *gorm.DB
	box      *secrets.Box
	searches *ratelimit.Pacer
}

// NewService is the event search over db, opening sent headers with box and pacing searches by
// searches.
func NewService(db *gorm.DB, box *secrets.Box, searches *ratelimit.Pacer) *Service {
	return &Service{db: db, box: box, searches: searches}
}
