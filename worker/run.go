package worker

import (
	"cmp"
	"context"
	"fmt"

	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"

	"wds/activities"
	"wds/internal/dispatch"
	"wds/internal/platform/config"
	"wds/internal/platform/durations"
	"wds/internal/platform/egress"
	"wds/internal/platform/secrets"
)

// Run serves the workflows and activities with cfg's settings and runs starter's relay until ctx
// ends. Deliveries trust the system roots, WDS_WEBHOOK_CA_FILE and extraCAs.
func Run(ctx context.Context, cfg *config.Config, c client.Client, box *secrets.Box, starter *dispatch.Starter, log logrus.FieldLogger, extraCAs ...string) error {
	if cfg.WebhookCAFile != "" {
		extraCAs = append(extraCAs, cfg.WebhookCAFile)
	}
	httpc, err := egress.NewClient(egress.Options{AllowPrivate: cfg.WebhookAllowPrivate, CAFiles: extraCAs})
	if err != nil {
		return err
	}
	if cfg.Retention > 0 && cfg.Retention < MinRetention {
		return fmt.Errorf("WDS_RETENTION=%s: keep at least %s (a chain's retries span days), or 0 to keep everything",
			cfg.Retention, durations.Text(MinRetention))
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
		Deployment:  Deployment{Name: cfg.DeploymentName, BuildID: cfg.BuildID, Promote: cfg.PromoteVersion},
	})
}
