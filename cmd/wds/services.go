package main

import (
	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"wds/api"
	"wds/api/console"
	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/deliverylog"
	"wds/internal/dispatch"
	"wds/internal/endpoints"
	"wds/internal/eventsearch"
	"wds/internal/feed"
	"wds/internal/fulfillment"
	"wds/internal/ingest"
	"wds/internal/platform/config"
	"wds/internal/platform/paging"
	"wds/internal/platform/secrets"
	"wds/internal/recovery"
	"wds/internal/resend"
	"wds/internal/versions"
	"wds/internal/workspace"
)

// services are a process's domain services, each built once, here, over one pool, one sealing box
// and one way of starting what they commit, and handed to the APIs, the console, `wds admin`,
// `wds listen` and the demo workspace alike: one service, one set of rules and one after-commit
// start, whichever adapter calls it. The worker builds none: its activities are the delivery
// engine's own.
type services struct {
	keys       *apikeys.Service
	people     *workspace.Service
	orders     *ingest.Service
	catalog    *catalog.Service
	shipping   *fulfillment.Service
	keyLists   *apikeys.KeyLists
	audit      *workspace.AuditLog
	feed       *feed.Service
	webhooks   *endpoints.Service
	deliveries *deliverylog.Service
	events     *eventsearch.Service
	resends    *resend.Service
	recoveries *recovery.Service
	// starter is nil in a process without a Temporal client.
	starter *dispatch.Starter
	// temporal is the process's Temporal client, for the console's worker versions; nil without one.
	temporal client.Client
}

// newServices builds them with cfg's settings. box seals and opens secrets; nil refuses the
// operations that need it. starter starts what each write commits right after the commit, stops
// the chains of a disabled endpoint and starts resends and recoveries (wds serve, wds dev). Without
// one (wds admin, wds listen, the demo workspace) the worker's relay starts the events, and the
// resends and re-fires queued are announced to the workers (dispatch.DispatchNotifier), which start
// them at once.
func newServices(cfg *config.Config, db *gorm.DB, box *secrets.Box, starter *dispatch.Starter, log logrus.FieldLogger) *services {
	// One org's list reads take turns, whether through a list or an endpoint's delivery log.
	reads := paging.NewReadPacer(cfg.OperatorReadRate)
	hooks := endpoints.Options{AllowPrivate: cfg.WebhookAllowPrivate}
	var dispatches resend.DispatchStarter = dispatch.DispatchNotifier{DB: db, Log: log}
	var events interface {
		ingest.EventStarter
		catalog.EventStarter
		fulfillment.EventStarter
	}
	var recoveries recovery.Starter
	if starter != nil {
		events = starter
		hooks.Stopper, dispatches, recoveries = starter, starter, starter
	}
	return &services{
		keys: apikeys.NewService(db, box), people: workspace.NewService(db), orders: ingest.NewService(db, events),
		catalog: catalog.NewService(db, events), shipping: fulfillment.NewService(db, events),
		keyLists: apikeys.NewKeyLists(db, reads), audit: workspace.NewAuditLog(db, reads), feed: feed.NewService(db, cfg.Retention),
		webhooks: endpoints.NewService(db, box, hooks), deliveries: deliverylog.NewService(db, box, reads),
		events: eventsearch.NewService(db, box, eventsearch.NewSearchPacer(cfg.SupportSearchRate)), resends: resend.NewService(db, dispatches), recoveries: recovery.NewService(db, recoveries, cfg.Retention),
		starter: starter,
	}
}

// apply hands the API its services.
func (s *services) apply(db *gorm.DB, d *api.Deps) {
	d.Services = api.NewServices(db, api.Domain{Keys: s.keys, People: s.people, Orders: s.orders,
		Vendors: s.catalog, Shipping: s.shipping, KeyLists: s.keyLists, Audit: s.audit, Deliveries: s.deliveries, Feed: s.feed})
	d.Webhooks = s.webhooks
	d.Events = s.events
	d.Resends = s.resends
	d.Recoveries = s.recoveries
	if s.starter != nil {
		d.Dispatches = s.starter
	}
}

// console is the operator console over the services, with cfg's settings.
func (s *services) console(cfg *config.Config, db *gorm.DB, log logrus.FieldLogger) *console.Console {
	c := &console.Console{DB: db, Log: log, Webhooks: s.webhooks, Recoveries: s.recoveries,
		Members: s.people, Sessions: s.people, Keys: s.keys, KeyLists: s.keyLists, Audit: s.audit, Deliveries: s.deliveries, Events: s.events, Resends: s.resends, Shipping: s.shipping, Vendors: s.catalog, Clients: s.orders,
		TemporalUI: cfg.TemporalUIURL, Namespace: cfg.TemporalNamespace, RetrySchedule: cfg.WebhookRetrySchedule,
		InsecureCookie: cfg.ConsoleInsecureCookie}
	if s.starter != nil {
		c.Dispatches = s.starter
	}
	if s.temporal != nil {
		c.Versions = &versions.Shared{Source: versions.Deployments{Temporal: s.temporal, Name: cfg.DeploymentName}}
	}
	return c
}
