package worker

import (
	"cmp"
	"context"
	"fmt"

	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"wds/activities"
	"wds/internal/platform/config"
	"wds/internal/platform/egress"
	"wds/internal/platform/secrets"
)

// NewStarter is the Starter of a wds process: cfg's retry ladder, the relay's grace. A process builds
// one and hands it to every writer (the after-commit starts) and to Run (the relay, the activities'
// own starts).
func NewStarter(cfg *config.Config, db *gorm.DB, c client.Client, log logrus.FieldLogger) *Starter {
	return &Starter{DB: db, Temporal: c, Schedule: cfg.WebhookRetrySchedule, Log: log, Grace: RelayGrace, Namespace: cfg.TemporalNamespace}
}

// Run serves the workflows and activities with cfg's settings and runs starter's relay until ctx
// ends. Deliveries trust the system roots, WDS_WEBHOOK_CA_FILE and extraCAs.
func Run(ctx context.Context, cfg *config.Config, c client.Client, box *secrets.Box, starter *Starter, log logrus.FieldLogger, extraCAs ...string) error {
	if cfg.WebhookCAFile != "" {
		extraCAs = append(extraCAs, cfg.WebhookCAFile)
	}
	httpc, err := egress.NewClient(egress.Options{AllowPrivate: cfg.WebhookAllowPrivate, CAFiles: extraCAs})
	if err != nil {
		return err
	}
	if cfg.Retention > 0 && cfg.Retention < MinRetention {
		return fmt.Errorf("WDS_RETENTION=%s: keep at least %s (a chain's retries span days), or 0 to keep everything",
			cfg.Retention, MinRetention)
	}
	return Serve(ctx, Options{
		Temporal: c,
		Activities: &activities.Activities{DB: starter.DB, Box: box, HTTP: httpc, Batches: starter, Events: starter,
			DisableAfter: cfg.WebhookDisableAfter, RecoveryRate: cfg.RecoveryRate, Log: log},
		Starter:     starter,
		Log:         log,
		Retention:   cfg.Retention,
		ListenURL:   cmp.Or(cfg.ListenDatabaseURL, cfg.DatabaseURL),
		ManualSlots: cfg.ManualActivities,
	})
}
