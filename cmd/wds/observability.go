package main

import (
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/internal/platform/config"
	"wds/internal/platform/metrics"
)

// startMetrics serves /metrics on WDS_METRICS_ADDR, apart from the API, and reports db's outbox
// backlog there, and serves runtime profiles on WDS_PPROF_ADDR when it is set. Every long-running
// command (serve, worker, dev) calls it once; stop undoes all of it.
func startMetrics(cfg *config.Config, db *gorm.DB, log logrus.FieldLogger) (stop func(), err error) {
	unwatch, err := metrics.WatchOutbox(db)
	if err != nil {
		return nil, err
	}
	srv, err := metrics.Start(cfg.MetricsAddr, log)
	if err != nil {
		unwatch()
		return nil, err
	}
	if cfg.PprofAddr == "" {
		return func() { srv.Stop(); unwatch() }, nil
	}
	prof, err := metrics.StartProfiler(cfg.PprofAddr, log)
	if err != nil {
		srv.Stop()
		unwatch()
		return nil, err
	}
	return func() { prof.Stop(); srv.Stop(); unwatch() }, nil
}
