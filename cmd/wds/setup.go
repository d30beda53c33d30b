package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/internal/endpoints"
	"wds/internal/platform/config"
	"wds/internal/platform/database"
	"wds/internal/platform/metrics/temporalmetrics"
	"wds/internal/platform/secrets"
	"wds/internal/platform/tracing"
	"wds/migrations"
)

// devURLFile is where `wds dev` records its database URL so admin commands find it.
const devURLFile = "database_url"

// databaseURL is DATABASE_URL, or else the URL `wds dev` recorded in its data directory.
func databaseURL(cfg *config.Config) (string, error) {
	if cfg.DatabaseURL != "" {
		return cfg.DatabaseURL, nil
	}
	b, err := os.ReadFile(filepath.Join(cfg.DataDir, devURLFile))
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	return "", errors.New("DATABASE_URL is not set and no `wds dev` database was found in WDS_DATA_DIR " +
		"(" + cfg.DataDir + "): set DATABASE_URL=postgres://user:pass@host:5432/db or start `wds dev` first")
}

// allowLocalReceivers lets a laptop's own receivers in: under `wds dev`, and for `wds admin` on the
// wds dev database, WDS_WEBHOOK_ALLOW_PRIVATE defaults to true, since a laptop has nothing to
// protect from itself; setting it (to false) keeps the production rule. `wds serve` and `wds worker`
// never call it. It reports whether it allowed them.
func allowLocalReceivers(cfg *config.Config) bool {
	if _, set := os.LookupEnv("WDS_WEBHOOK_ALLOW_PRIVATE"); set {
		return false
	}
	cfg.WebhookAllowPrivate = true
	return true
}

// localReceiversNote is what `wds dev` says when it allows them, and `wds admin endpoint create` and
// `update` the first time they do on a data directory.
const localReceiversNote = "local receivers allowed: endpoint URLs may point at loopback and private addresses " +
	"(the wds dev default; set WDS_WEBHOOK_ALLOW_PRIVATE=false to refuse them)"

// localReceiversNotedFile marks a data directory whose admin commands have said localReceiversNote.
const localReceiversNotedFile = "local_receivers_noted"

// allowLocalReceiversOnDevDB is allowLocalReceivers for an admin command that writes endpoint URLs:
// on the wds dev database only, and saying so once per data directory (the marker file is created
// with O_EXCL, so of two concurrent commands one says it). A directory it cannot write to hears it
// every time rather than never.
func allowLocalReceiversOnDevDB(env *adminEnv, w io.Writer) {
	if !env.devDB || !allowLocalReceivers(env.cfg) {
		return
	}
	f, err := os.OpenFile(filepath.Join(env.cfg.DataDir, localReceiversNotedFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return
	}
	if err == nil {
		_, _ = f.WriteString(localReceiversNote + "\n")
		_ = f.Close()
	}
	fmt.Fprintln(w, "wds admin: "+localReceiversNote)
}

// openCurrent opens the database and refuses a schema older than this binary.
func openCurrent(ctx context.Context, cfg *config.Config, log logrus.FieldLogger) (*gorm.DB, error) {
	url, err := databaseURL(cfg)
	if err != nil {
		return nil, err
	}
	db, err := database.Open(ctx, url, log, database.Concurrency(cfg.DBConcurrency))
	if err != nil {
		return nil, err
	}
	sqlDB, _ := db.DB()
	pending, err := migrations.Pending(ctx, sqlDB)
	if err != nil {
		return nil, err
	}
	if pending {
		_ = sqlDB.Close()
		return nil, errors.New("the database schema is older than this binary: run `wds migrate up` first")
	}
	return db, nil
}

// devKeyFile holds the encryption key `wds dev` generated.
const devKeyFile = "encryption.key"

// encryptionBox opens WDS_ENCRYPTION_KEY, or the key `wds dev` generated when that is unset.
func encryptionBox(cfg *config.Config) (*secrets.Box, error) {
	key := cfg.EncryptionKey
	if key == "" {
		b, err := os.ReadFile(filepath.Join(cfg.DataDir, devKeyFile))
		if err != nil {
			return nil, cfg.RequireEncryptionKey()
		}
		key = strings.TrimSpace(string(b))
	}
	box, err := secrets.NewBox(key)
	if err != nil {
		return nil, fmt.Errorf("WDS_ENCRYPTION_KEY: %w", err)
	}
	if len(cfg.EncryptionKeyPrevious) == 0 {
		return box, nil
	}
	// During a rotation values sealed under the previous keys stay readable until re-sealed.
	if box, err = box.WithPrevious(cfg.EncryptionKeyPrevious...); err != nil {
		return nil, fmt.Errorf("WDS_ENCRYPTION_KEY_PREVIOUS: %w", err)
	}
	return box, nil
}

// service is what `wds serve` and `wds worker` share: settings, logger, a current database, the
// metrics listener and the at-rest key.
type service struct {
	cfg *config.Config
	log *logrus.Logger
	db  *gorm.DB
	box *secrets.Box
}

// startService opens everything a long-running command needs; close releases it in reverse order.
// role names the process in its traces (wds-serve, wds-worker).
func startService(ctx context.Context, role string) (p *service, closeAll func(), err error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, nil, err
	}
	log := cfg.Logger()
	// Before the database and Temporal clients are made, so their spans and interceptors see it.
	stopTracing, err := tracing.Setup(ctx, role, log)
	if err != nil {
		return nil, nil, err
	}
	flushTraces := func() {
		fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTracing(fctx); err != nil {
			log.WithError(err).Warn("traces not flushed")
		}
	}
	db, err := openCurrent(ctx, cfg, log)
	if err != nil {
		flushTraces()
		return nil, nil, err
	}
	// The Temporal SDK's exporter finishes initialising after it registers with the registry, so it
	// must exist before the listener serves scrapes (the race detector caught a scrape reading it).
	if _, err := temporalmetrics.Handler(); err != nil {
		_ = database.Close(db)
		flushTraces()
		return nil, nil, err
	}
	stopMetrics, err := startMetrics(cfg, db, log)
	if err != nil {
		_ = database.Close(db)
		flushTraces()
		return nil, nil, err
	}
	closeAll = func() { stopMetrics(); _ = database.Close(db); flushTraces() }
	box, err := encryptionBox(cfg)
	if err == nil {
		err = endpoints.CheckKeys(ctx, db, box)
	}
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return &service{cfg: cfg, log: log, db: db, box: box}, closeAll, nil
}
