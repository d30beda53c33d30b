package main

import (
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/internal/platform/config"
	"wds/internal/platform/metrics"
)

// startMetrics serves /metrics on WDS_METRICS_ADDR, apart from the API, and reports db's outbox
// backlog there. Every long-running command (serve, worker, dev) calls it once; stop undoes both.
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
	return func() { srv.Stop(); unwatch() }, nil
}
