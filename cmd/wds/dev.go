package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/internal/dev/pgcluster"
	"wds/internal/platform/config"
	"wds/internal/platform/database"
	"wds/internal/platform/secrets"
	"wds/migrations"
)

func init() { commands["dev"] = devCmd }

// devCmd runs everything on a laptop, keeping its state in WDS_DATA_DIR so a second start reuses it.
func devCmd(ctx context.Context, _ []string) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	log := cfg.Logger()
	if cfg.DataDir, err = filepath.Abs(cfg.DataDir); err != nil {
		return fmt.Errorf("WDS_DATA_DIR: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("WDS_DATA_DIR: %w", err)
	}
	if cfg.DatabaseURL == "" {
		cluster, err := startDevPostgres(ctx, cfg)
		if err != nil {
			return err
		}
		defer func() {
			log.Info("stopping PostgreSQL")
			_ = cluster.Stop(context.Background())
		}()
	}
	if err := recordDevURL(cfg); err != nil {
		return err
	}
	if err := ensureDevKey(cfg); err != nil {
		return err
	}
	db, err := migratedDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer database.Close(db)
	stopMetrics, err := startMetrics(cfg, db, log)
	if err != nil {
		return err
	}
	defer stopMetrics()
	box, err := encryptionBox(cfg)
	if err != nil {
		return err
	}
	hooks, err := startDevWebhooks(ctx, cfg, db, box, log)
	if err != nil {
		return err
	}
	defer hooks.stop()
	svc := newServices(cfg, db, box, hooks.starter, log)
	svc.temporal = hooks.temporal
	demo, err := ensureDemo(ctx, svc, cfg.DataDir)
	if err != nil {
		return err
	}
	devConsole(cfg, hooks.uiURL)
	printWelcome(cfg, demo)
	hooks.print()
	return serveHTTP(ctx, cfg, db, log, svc)
}

// devConsole fits the console to a laptop unless told otherwise: the cookie goes over plain HTTP,
// and workflow links open the embedded Temporal UI wherever it listens.
func devConsole(cfg *config.Config, uiURL string) {
	if _, set := os.LookupEnv("WDS_CONSOLE_INSECURE_COOKIE"); !set {
		cfg.ConsoleInsecureCookie = true
	}
	if _, set := os.LookupEnv("WDS_TEMPORAL_UI_URL"); !set && uiURL != "" {
		cfg.TemporalUIURL = uiURL
	}
}

// startDevPostgres starts the private cluster and records its URL for `wds admin`.
func startDevPostgres(ctx context.Context, cfg *config.Config) (*pgcluster.Cluster, error) {
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Dir: filepath.Join(cfg.DataDir, "postgres"), Durable: true})
	if err != nil {
		return nil, err
	}
	admin, err := database.Open(ctx, cluster.URL("postgres"), logrus.StandardLogger())
	if err != nil {
		_ = cluster.Stop(ctx)
		return nil, err
	}
	defer database.Close(admin)
	var n int64
	admin.Raw("SELECT count(*) FROM pg_database WHERE datname = 'wds'").Find(&n)
	if n == 0 {
		if err := admin.Exec("CREATE DATABASE wds").Error; err != nil {
			_ = cluster.Stop(ctx)
			return nil, fmt.Errorf("create database: %w", err)
		}
	}
	cfg.DatabaseURL = cluster.URL("wds")
	return cluster, nil
}

// recordDevURL writes the database URL wds dev runs on into its data directory, its private
// cluster's or the DATABASE_URL it was given (`make run-cluster` gives one), so `wds admin` and
// `wds listen` started with the same WDS_DATA_DIR find the database whose secrets its key seals.
func recordDevURL(cfg *config.Config) error {
	if err := os.WriteFile(filepath.Join(cfg.DataDir, devURLFile), []byte(cfg.DatabaseURL+"\n"), 0o600); err != nil {
		return fmt.Errorf("record database URL: %w", err)
	}
	return nil
}

// ensureDevKey generates the at-rest encryption key once, unless WDS_ENCRYPTION_KEY is set.
func ensureDevKey(cfg *config.Config) error {
	if cfg.EncryptionKey != "" {
		return nil
	}
	file := filepath.Join(cfg.DataDir, devKeyFile)
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		b = []byte(secrets.GenerateKey())
		err = os.WriteFile(file, b, 0o600)
	}
	if err != nil {
		return fmt.Errorf("dev encryption key: %w", err)
	}
	cfg.EncryptionKey = strings.TrimSpace(string(b))
	return nil
}

func migratedDatabase(ctx context.Context, cfg *config.Config, log logrus.FieldLogger) (*gorm.DB, error) {
	db, err := database.Open(ctx, cfg.DatabaseURL, log, database.Concurrency(cfg.DBConcurrency))
	if err != nil {
		return nil, err
	}
	sqlDB, _ := db.DB()
	if _, err := migrations.Up(ctx, sqlDB); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	return db, nil
}

func printWelcome(cfg *config.Config, d *demoData) {
	host := cfg.HTTPAddr
	if strings.HasPrefix(host, ":") {
		host = "localhost" + host
	}
	b, _ := json.MarshalIndent(d, "  ", "  ")
	fmt.Printf(`
wds dev is up (state in %s; Ctrl-C stops everything)

  API          http://%[2]s
  Console      http://%[2]s/console/  (sign in with the operator_token below)
  PostgreSQL   %[3]s
  CLI          WDS_DATA_DIR=%[1]s ./bin/wds admin ... (and wds listen) reach this state

  demo workspace (also in %[4]s):
  %[5]s

  try:
    curl -s http://%[2]s/v1/health
    curl -s -H 'Authorization: Bearer %[6]s' http://%[2]s/v1/orders
    curl -s -H 'Authorization: Bearer %[6]s' http://%[2]s/v1/products

`, cfg.DataDir, host, cfg.DatabaseURL, filepath.Join(cfg.DataDir, demoFile), b, d.ReadKey)
}
