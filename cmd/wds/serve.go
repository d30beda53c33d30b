package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/api/console"
	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/fulfillment"
	"wds/internal/ingest"
	"wds/internal/operator"
	"wds/internal/platform/config"
	"wds/internal/workspace"
)

func init() { commands["serve"] = serveCmd }

// serveCmd runs the HTTP API until SIGTERM.
func serveCmd(ctx context.Context, _ []string) error {
	tuneGC(os.Getenv)
	p, closeAll, err := startService(ctx, "wds-serve")
	if err != nil {
		return err
	}
	defer closeAll()
	tc, err := lazyTemporal(p.cfg)
	if err != nil {
		return err
	}
	defer tc.Close()
	return serveHTTP(ctx, p.cfg, p.db, p.log, newWebhookWiring(p.cfg, p.db, p.box, tc, p.log))
}

// newHTTPServer is the server of the API (`wds serve`, `wds dev`) and of `wds listen`, with every
// timeout of config/timeouts.go: a client that is slow to send its headers or body, or that keeps an
// idle connection open, is disconnected, so slow or stalled clients cannot hold connections and
// goroutines without bound. The API's own middleware puts the request deadline on each request.
func newHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: config.HTTPReadHeaderTimeout,
		ReadTimeout:       config.HTTPReadTimeout,
		WriteTimeout:      config.HTTPWriteTimeout,
		IdleTimeout:       config.HTTPIdleTimeout,
	}
}

// serveHTTP builds the API from cfg and serves it on WDS_HTTP_ADDR until ctx ends, then drains.
func serveHTTP(ctx context.Context, cfg *config.Config, db *gorm.DB, log *logrus.Logger, hooks webhookWiring) error {
	lastUsed := apikeys.NewLastUsed(db, log)
	url, err := databaseURL(cfg)
	if err != nil {
		return err
	}
	// Integration keys' signing secrets are sealed with the same key as the webhook endpoints'.
	// The domain services start the events they commit with the webhook starter, whichever of the
	// APIs or the console called them.
	stores := api.DBStores(db, hooks.service.Box, hooks.starter)
	keys := apikeys.NewCache()
	api.CacheKeys(&stores, keys)
	deps := api.Deps{Stores: stores, Log: log, TrustedProxies: cfg.TrustedProxies, LastUsed: lastUsed}
	hooks.apply(&deps)
	router, err := api.NewRouter(deps)
	if err != nil {
		return fmt.Errorf("WDS_TRUSTED_PROXIES: %w", err)
	}
	(&console.Console{DB: db, Log: log, Webhooks: hooks.service, Dispatches: hooks.starter,
		Members: workspace.NewService(db), Keys: apikeys.NewService(db, hooks.service.Box), Lists: operator.NewService(db), Shipping: fulfillment.NewService(db, hooks.starter),
		Vendors: catalog.NewService(db, hooks.starter), Clients: ingest.NewService(db, hooks.starter),
		TemporalUI: cfg.TemporalUIURL, Namespace: cfg.TemporalNamespace, RetrySchedule: cfg.WebhookRetrySchedule, InsecureCookie: cfg.ConsoleInsecureCookie}).Register(router)
	srv := newHTTPServer(cfg.HTTPAddr, router)
	flushCtx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	flushed := make(chan struct{})
	go func() { lastUsed.Run(flushCtx); close(flushed) }()
	listened := make(chan struct{})
	go func() { keys.Listen(flushCtx, apikeys.ConnectURL(url), log); close(listened) }()

	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.WithField("addr", cfg.HTTPAddr).Info("HTTP API listening")
	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down: draining in-flight requests")
		sctx, cancel := context.WithTimeout(context.Background(), config.ShutdownGrace)
		err = srv.Shutdown(sctx)
		cancel()
	}
	stopFlush()
	<-flushed
	<-listened
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
