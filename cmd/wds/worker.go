package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"wds/activities"
	"wds/api"
	"wds/internal/dev/temporaldev"
	"wds/internal/endpoints"
	"wds/internal/platform/config"
	"wds/internal/platform/egress"
	"wds/internal/platform/metrics"
	"wds/internal/platform/secrets"
	"wds/internal/platform/tracing"
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
	c, err := dialTemporal(ctx, p.cfg, p.log)
	if err != nil {
		return err
	}
	defer c.Close()
	// Every start sets the Wds* search attributes, and Temporal refuses a start whose attributes the
	// namespace lacks: a worker that went on without them would deliver nothing. Stop here instead.
	if err := worker.EnsureSearchAttributes(ctx, c, p.cfg.TemporalNamespace); err != nil {
		return fmt.Errorf("the Wds* search attributes are missing on Temporal namespace %q and cannot be added (%w); "+
			"without them no delivery can start: register them as docs/production.md shows, then start the worker again",
			p.cfg.TemporalNamespace, err)
	}
	return runWorker(ctx, p.cfg, p.db, p.box, c, p.log)
}

// temporalAddress is TEMPORAL_ADDRESS or the default frontend.
func temporalAddress(cfg *config.Config) string {
	if cfg.TemporalAddress != "" {
		return cfg.TemporalAddress
	}
	return config.DefaultTemporalAddress
}

// temporalOptions are the client options of every wds process. gRPC compression is off: wds sends
// ids, never bodies, so its messages are small, and the SDK's default gzip made the Temporal server
// decompress every start, poll answer and task completion for nothing (13% of the start path in
// the benchmark's profile).
func temporalOptions(cfg *config.Config) (client.Options, error) {
	mh, err := metrics.TemporalHandler()
	if err != nil {
		return client.Options{}, err
	}
	// With tracing on, the trace of the request that starts a workflow goes on into its activities.
	interceptors, err := tracing.TemporalInterceptors()
	if err != nil {
		return client.Options{}, err
	}
	o := client.Options{HostPort: temporalAddress(cfg), Namespace: cfg.TemporalNamespace, Logger: temporaldev.QuietLogger(),
		MetricsHandler: mh, Interceptors: interceptors,
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionNone{}}}
	if cfg.TemporalAPIKey != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(cfg.TemporalAPIKey)
	}
	if cfg.TemporalTLS() {
		if o.ConnectionOptions.TLS, err = temporalTLS(cfg); err != nil {
			return client.Options{}, err
		}
	}
	return o, nil
}

// temporalTLS is the TLS of a Temporal Cloud or secured cluster connection: the system roots (or
// TEMPORAL_TLS_CA), the client certificate for mTLS when given, and the server name when it differs
// from the address's host.
func temporalTLS(cfg *config.Config) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.TemporalTLSServerName}
	if cfg.TemporalTLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TemporalTLSCert, cfg.TemporalTLSKey)
		if err != nil {
			return nil, fmt.Errorf("TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	if cfg.TemporalTLSCA != "" {
		pem, err := os.ReadFile(cfg.TemporalTLSCA)
		if err != nil {
			return nil, fmt.Errorf("TEMPORAL_TLS_CA: %w", err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TEMPORAL_TLS_CA=%q holds no PEM certificate", cfg.TemporalTLSCA)
		}
	}
	return t, nil
}

// dialTemporal connects, waiting for a Temporal that is still starting (a worker often starts first).
func dialTemporal(ctx context.Context, cfg *config.Config, log logrus.FieldLogger) (client.Client, error) {
	opts, err := temporalOptions(cfg)
	if err != nil {
		return nil, err
	}
	for wait := time.Second; ; wait = min(wait*2, 15*time.Second) {
		c, err := client.DialContext(ctx, opts)
		if err == nil {
			return c, nil
		}
		log.WithError(err).WithField("address", opts.HostPort).Warn("Temporal is not reachable yet; retrying")
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to Temporal at %s: %w", opts.HostPort, err)
		case <-time.After(wait):
		}
	}
}

// runWorker serves the delivery workflows and activities and runs the relay until ctx ends. Deliveries
// trust the system roots, WDS_WEBHOOK_CA_FILE and extraCAs.
func runWorker(ctx context.Context, cfg *config.Config, db *gorm.DB, box *secrets.Box, c client.Client, log logrus.FieldLogger, extraCAs ...string) error {
	if cfg.WebhookCAFile != "" {
		extraCAs = append(extraCAs, cfg.WebhookCAFile)
	}
	httpc, err := egress.NewClient(egress.Options{AllowPrivate: cfg.WebhookAllowPrivate, CAFiles: extraCAs})
	if err != nil {
		return err
	}
	if cfg.Retention > 0 && cfg.Retention < worker.MinRetention {
		return fmt.Errorf("WDS_RETENTION=%s: keep at least %s (a chain's retries span days), or 0 to keep everything",
			cfg.Retention, worker.MinRetention)
	}
	starter := newStarter(cfg, db, c, log)
	return worker.RunWorker(ctx, worker.WorkerOptions{
		Temporal: c,
		Activities: &activities.Activities{DB: db, Box: box, HTTP: httpc, Batches: starter, Events: starter,
			DisableAfter: cfg.WebhookDisableAfter},
		Starter:   starter,
		Log:       log,
		Retention: cfg.Retention,
	})
}

func newStarter(cfg *config.Config, db *gorm.DB, c client.Client, log logrus.FieldLogger) *worker.Starter {
	return &worker.Starter{DB: db, Temporal: c, Schedule: cfg.WebhookRetrySchedule, Log: log, Grace: worker.RelayGrace}
}

// webhookWiring is what the HTTP API needs from the webhook engine.
type webhookWiring struct {
	service *endpoints.Service
	starter *worker.Starter
}

// newWebhookWiring builds the operations and, with a Temporal client, the after-commit starter.
func newWebhookWiring(cfg *config.Config, db *gorm.DB, box *secrets.Box, c client.Client, log logrus.FieldLogger) webhookWiring {
	starter := newStarter(cfg, db, c, log)
	return webhookWiring{
		service: &endpoints.Service{DB: db, Box: box, AllowPrivate: cfg.WebhookAllowPrivate, Stopper: starter, Dispatcher: starter,
			Recoveries: starter, Retention: cfg.Retention},
		starter: starter,
	}
}

// apply fills the API's dependencies.
func (w webhookWiring) apply(d *api.Deps) {
	d.Webhooks = w.service
	d.Support = w.service
	d.Dispatches = w.starter
}

// lazyTemporal is a client that connects on first use, so `wds serve` starts while Temporal is away;
// starts that fail meanwhile are left to the relay.
func lazyTemporal(cfg *config.Config) (client.Client, error) {
	opts, err := temporalOptions(cfg)
	if err != nil {
		return nil, err
	}
	c, err := client.NewLazyClient(opts)
	if err != nil {
		return nil, fmt.Errorf("TEMPORAL_ADDRESS: %w", err)
	}
	return c, nil
}
