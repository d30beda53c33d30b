package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/sirupsen/logrus"

	"wds/internal/platform/config"
	"wds/internal/platform/database"
	"wds/internal/platform/temporalclient"
	"wds/migrations"
)

func init() { commands["migrate"] = migrateCmd }

// searchAttributeWait bounds how long `migrate up` waits for a Temporal that is still starting.
const searchAttributeWait = 2 * time.Minute

// migrateCmd runs `wds migrate up|status` and prints the result as JSON. `up` also registers the
// Wds* search attributes on the Temporal named by TEMPORAL_ADDRESS (docs/webhooks.md), so one
// one-shot prepares both stores a deployment needs.
func migrateCmd(ctx context.Context, args []string) error {
	if len(args) != 1 || (args[0] != "up" && args[0] != "status") {
		return errors.New("usage: wds migrate up|status")
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	log := cfg.Logger()
	url, err := databaseURL(cfg)
	if err != nil {
		return err
	}
	// A migration may build an index over a large table for longer than any request runs, so the
	// statement timeout is off; the lock timeout stays, so a migration queued behind a long
	// transaction gives up (re-run it) instead of holding every query of the table behind it.
	db, err := database.Open(ctx, url, log, database.StatementTimeout(0))
	if err != nil {
		return err
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	var out any
	if args[0] == "up" {
		out, err = migrateUp(ctx, cfg, sqlDB, log)
	} else {
		var list []migrations.Status
		list, err = migrations.List(ctx, sqlDB)
		out = map[string]any{"migrations": list}
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

func migrateUp(ctx context.Context, cfg *config.Config, sqlDB *sql.DB, log logrus.FieldLogger) (any, error) {
	n, err := migrations.Up(ctx, sqlDB)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"applied": n, "search_attributes": "skipped: TEMPORAL_ADDRESS is unset"}
	if cfg.TemporalAddress == "" {
		return out, nil
	}
	wctx, cancel := context.WithTimeout(ctx, searchAttributeWait)
	defer cancel()
	c, err := temporalclient.Dial(wctx, cfg, log)
	if err != nil {
		return nil, fmt.Errorf("register search attributes on %s: %w", cfg.TemporalAddress, err)
	}
	defer c.Close()
	if err := temporalclient.EnsureSearchAttributes(wctx, c.OperatorService(), cfg.TemporalNamespace, log); err != nil {
		return nil, err
	}
	out["search_attributes"] = "registered"
	return out, nil
}
