package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"wds/internal/dev/temporaldev"
	"wds/internal/dispatch"
	"wds/internal/platform/config"
	"wds/internal/platform/secrets"
	"wds/internal/platform/temporalclient"
	"wds/worker"
)

// devWebhooks is the webhook engine of `wds dev`: an embedded Temporal dev server (unless
// TEMPORAL_ADDRESS names one) and the worker with its relay, running beside the API.
type devWebhooks struct {
	starter *dispatch.Starter
	// temporal is the client of the Temporal the engine runs on.
	temporal client.Client
	address  string
	uiURL    string
	// local is set when local receivers are allowed (allowLocalReceivers).
	local bool
	stop  func()
}

// devPromoteWait bounds how long wds dev waits for its worker's version to become current before it
// says it is up.
const devPromoteWait = 30 * time.Second

// Preferred ports of the embedded server: the Temporal CLI's defaults, so its docs apply.
const (
	devTemporalPort   = 7233
	devTemporalUIPort = 8233
)

func startDevWebhooks(ctx context.Context, cfg *config.Config, db *gorm.DB, box *secrets.Box, log *logrus.Logger) (*devWebhooks, error) {
	d := &devWebhooks{address: cfg.TemporalAddress, local: allowLocalReceivers(cfg)}
	ca, err := ensureDevCA(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	var c client.Client
	var srv *temporaldev.Server
	if cfg.TemporalAddress == "" {
		if srv, err = startDevTemporal(ctx, cfg); err != nil {
			return nil, err
		}
		c, d.address, d.uiURL = srv.Client(), srv.Address, srv.UIURL
	} else {
		if c, err = temporalclient.Dial(ctx, cfg, log); err != nil {
			return nil, err
		}
		if err := temporalclient.EnsureSearchAttributes(ctx, c.OperatorService(), cfg.TemporalNamespace, log); err != nil {
			log.WithError(err).Warn("cannot register the Wds* search attributes")
		}
	}
	if err := recordDevTemporal(cfg, d.address); err != nil {
		if srv != nil {
			_ = srv.Stop()
		}
		return nil, err
	}
	starter := dispatch.NewStarter(cfg, db, c, log)
	d.starter, d.temporal = starter, c
	versionWorker(cfg)
	// A laptop runs one version at a time: each start routes new workflows to the build it runs.
	if _, set := os.LookupEnv("WDS_PROMOTE_VERSION"); !set {
		cfg.PromoteVersion = config.PromoteAlways
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- worker.Run(wctx, cfg, c, box, starter, log, ca) }()
	if cfg.PromoteVersion == config.PromoteAlways {
		actx, acancel := context.WithTimeout(ctx, devPromoteWait)
		if err := worker.AwaitCurrent(actx, c, worker.Deployment{Name: cfg.DeploymentName, BuildID: cfg.BuildID}); err != nil {
			log.WithError(err).Warn("new deliveries wait until the worker's version is current")
		}
		acancel()
	}
	d.stop = func() {
		cancel()
		if err := <-done; err != nil {
			log.WithError(err).Error("webhook worker")
		}
		if srv != nil {
			log.Info("stopping Temporal")
			_ = srv.Stop() // Ctrl-C reaches it too; it may have exited already
		} else {
			c.Close()
		}
	}
	return d, nil
}

// startDevTemporal runs the dev server with its state and log in WDS_DATA_DIR.
func startDevTemporal(ctx context.Context, cfg *config.Config) (*temporaldev.Server, error) {
	logFile, err := os.OpenFile(filepath.Join(cfg.DataDir, "temporal.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("Temporal log: %w", err)
	}
	return temporaldev.Start(ctx, temporaldev.Options{
		DBFile:    filepath.Join(cfg.DataDir, "temporal.db"),
		Port:      portOrFree(devTemporalPort),
		UI:        true,
		UIPort:    portOrFree(devTemporalUIPort),
		Namespace: cfg.TemporalNamespace,
		Output:    logFile,
	})
}

// portOrFree is the preferred port when it is free, else 0 (any free port): a second `wds dev` or a
// test next to a running one still starts.
func portOrFree(p int) int {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return 0
	}
	l.Close()
	return p
}

// print adds the engine's addresses to the welcome text.
func (d *devWebhooks) print() {
	fmt.Printf("  Temporal     %s\n", d.address)
	if d.uiURL != "" {
		fmt.Printf("  Temporal UI  %s  (webhook deliveries: filter by WdsOrderNumber, WdsEventId, WdsEndpointIds, WdsDeliveryStatus)\n", d.uiURL)
	}
	fmt.Println("  webhooks     see docs/webhooks.md; `wds listen` receives them on this laptop")
	if d.local {
		fmt.Println("               " + localReceiversNote)
	}
	fmt.Println()
}
