package main

import (
	"gorm.io/gorm"

	"wds/api"
	"wds/internal/dispatch"
	"wds/internal/endpoints"
	"wds/internal/feed"
	"wds/internal/platform/config"
	"wds/internal/platform/secrets"
)

// services are a process's domain services, each built once over one pool, one sealing box and one
// event starter, and handed to the APIs, the console and the worker alike: one service, one set of
// rules and one after-commit start, whichever adapter calls it.
type services struct {
	api.Domain
	webhooks *endpoints.Service
	starter  *dispatch.Starter
}

// newServices builds them. starter starts what each write commits, after commit; what it cannot
// start a worker's relay starts.
func newServices(cfg *config.Config, db *gorm.DB, box *secrets.Box, starter *dispatch.Starter) *services {
	domain := api.NewDomain(db, box, starter)
	domain.Feed = feed.NewService(db, cfg.Retention)
	// One org's list reads take turns, whether through a list or an endpoint's delivery log.
	reads := endpoints.NewReadPacer(cfg.OperatorReadRate)
	domain.Lists.Reads = reads
	return &services{
		Domain: domain,
		webhooks: &endpoints.Service{DB: db, Box: box, AllowPrivate: cfg.WebhookAllowPrivate, Stopper: starter,
			Dispatcher: starter, Recoveries: starter, Retention: cfg.Retention, Reads: reads,
			Searches: endpoints.NewSearchPacer(cfg.SupportSearchRate)},
		starter: starter,
	}
}

// apply hands the API its services.
func (s *services) apply(db *gorm.DB, d *api.Deps) {
	d.Services = api.NewServices(db, s.Domain)
	d.Webhooks = s.webhooks
	d.Support = s.webhooks
	d.Dispatches = s.starter
}
