package main

import (
	"cmp"
	"context"
	"fmt"

	"wds/internal/dispatch"
	"wds/internal/platform/config"
	"wds/internal/platform/temporalclient"
	"wds/worker"
)

func init() { commands["worker"] = workerCmd }

// workerCmd runs the Temporal worker and the outbox relay until SIGTERM.
func workerCmd(ctx context.Context, _ []string) error {
	p, closeAll, err := startService(ctx, "wds-worker")
	if err != nil {
		return err
	}
	defer closeAll()
	// The resends `wds admin` announces are heard on the database the worker uses, the wds dev one too.
	if url, err := databaseURL(p.cfg); err == nil {
		p.cfg.ListenDatabaseURL = cmp.Or(p.cfg.ListenDatabaseURL, url)
	}
	c, err := temporalclient.Dial(ctx, p.cfg, p.log)
	if err != nil {
		return err
	}
	defer c.Close()
	// Every start sets the Wds* search attributes, and Temporal refuses a start whose attributes the
	// namespace lacks: a worker that went on without them would deliver nothing. Stop here instead.
	if err := temporalclient.EnsureSearchAttributes(ctx, c.OperatorService(), p.cfg.TemporalNamespace, p.log); err != nil {
		return fmt.Errorf("the Wds* search attributes are missing on Temporal namespace %q and cannot be added (%w); "+
			"without them no delivery can start: register them as docs/production.md shows, then start the worker again",
			p.cfg.TemporalNamespace, err)
	}
	versionWorker(p.cfg)
	return worker.Run(ctx, p.cfg, c, p.box, dispatch.NewStarter(p.cfg, p.db, c, p.log), p.log)
}

// versionWorker gives the worker this binary's version (`wds version`) as its build id unless
// WDS_BUILD_ID is set: a release's workers are one Worker Deployment Version (docs/production.md).
func versionWorker(cfg *config.Config) {
	cfg.BuildID = cmp.Or(cfg.BuildID, version)
}
