// Package apitest builds the APIs' services over a test's database, as cmd/wds's composition root
// does for a process but with the defaults a test wants: no read or search pacing, events kept
// forever, and the caller's event starter (nil leaves the events written undispatched).
package apitest

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/api"
	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/deliverylog"
	"wds/internal/feed"
	"wds/internal/fulfillment"
	"wds/internal/ingest"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
)

// EventStarter starts what the services commit (dispatch.Starter, or a test's recorder).
type EventStarter interface {
	StartEvents(ctx context.Context, eventIDs []uuid.UUID)
}

// Domain is the domain services over db; box seals and opens secrets (nil refuses what needs it).
func Domain(db *gorm.DB, box *secrets.Box, events EventStarter) api.Domain {
	return api.Domain{Keys: apikeys.NewService(db, box), People: workspace.NewService(db),
		Orders: ingest.NewService(db, events), Vendors: catalog.NewService(db, events),
		Shipping: fulfillment.NewService(db, events), KeyLists: apikeys.NewKeyLists(db, nil), Audit: workspace.NewAuditLog(db, nil),
		Deliveries: deliverylog.NewService(db, box, nil), Feed: feed.NewService(db, 0)}
}

// Services is what the handlers call, over Domain's services.
func Services(db *gorm.DB, box *secrets.Box, events EventStarter) api.Services {
	return api.NewServices(db, Domain(db, box, events))
}
