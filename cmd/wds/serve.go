package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/internal/apikeys"
	"wds/internal/dispatch"
	"wds/internal/platform/config"
	"wds/internal/platform/temporalclient"
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
	tc, err := temporalclient.LazyClient(p.cfg)
	if err != nil {
		return err
	}
	defer tc.Close()
	svc := newServices(p.cfg, p.db, p.box, dispatch.NewStarter(p.cfg, p.db, tc, p.log), p.log)
	svc.temporal = tc
	return serveHTTP(ctx, p.cfg, p.db, p.log, svc)
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

// serveHTTP builds the API and the console over svc and serves them on WDS_HTTP_ADDR until ctx ends,
// then drains.
func serveHTTP(ctx context.Context, cfg *config.Config, db *gorm.DB, log *logrus.Logger, svc *services) error {
	lastUsed := apikeys.NewLastUsed(db, log)
	url, err := databaseURL(cfg)
	if err != nil {
		return err
	}
	deps := api.Deps{Log: log, TrustedProxies: cfg.TrustedProxies, TraceTrustCallers: cfg.TraceTrustCallers, LastUsed: lastUsed}
	svc.apply(db, &deps)
	keys := apikeys.NewCache()
	api.CacheKeys(&deps.Services, keys)
	router, err := api.NewRouter(deps)
	if err != nil {
		return fmt.Errorf("WDS_TRUSTED_PROXIES: %w", err)
	}
	svc.console(cfg, db, log).Register(router)
	srv := newHTTPServer(cfg.HTTPAddr, router)
	flushCtx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	flushed := make(chan struct{})
	go func() { lastUsed.Run(flushCtx); close(flushed) }()
	listened := make(chan struct{})
	listenURL := cmp.Or(cfg.ListenDatabaseURL, url)
	go func() {
		keys.Listen(flushCtx, apikeys.ConnectURL(listenURL), apikeys.NotifyDB(db), log)
		close(listened)
	}()

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
