// Command runcluster is `make run-cluster`: wds on the topology docker-compose.yml deploys, without a
// container engine. It starts a private PostgreSQL, the Temporal server built from source on it
// (internal/dev/temporalcluster: persistence and SQL visibility in PostgreSQL, 8 history shards, the
// namespace and search attributes registered by compose's own scripts), then `wds dev` against both,
// and stops all three on Ctrl-C. State is kept in WDS_DATA_DIR/cluster (default ./.wds/cluster),
// apart from `make run`'s.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"wds/internal/dev/pgcluster"
	"wds/internal/dev/temporalcluster"
)

func main() {
	wds := flag.String("wds", "./bin/wds", "the wds executable to run")
	flag.Parse()
	base := os.Getenv("WDS_DATA_DIR")
	if base == "" {
		base = ".wds"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *wds, filepath.Join(base, "cluster"), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "run-cluster:", err)
		os.Exit(1)
	}
}

// run starts PostgreSQL, Temporal and `wds dev` with their state in dir, and stops them in reverse
// order once ctx is done or wds exits.
func run(ctx context.Context, wds, dir string, out io.Writer) (err error) {
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	pg, err := pgcluster.Start(ctx, pgcluster.Options{Dir: filepath.Join(dir, "postgres"), Durable: true})
	if err != nil {
		return err
	}
	defer func() { _ = pg.Stop(context.Background()) }()
	if err := ensureDatabase(ctx, pg.URL("postgres"), "wds"); err != nil {
		return err
	}
	fmt.Fprintln(out, "starting the Temporal server (log in", filepath.Join(dir, "temporal", "temporal-server.log")+")")
	tc, err := temporalcluster.Start(ctx, temporalcluster.Options{Postgres: pg.URL("postgres"),
		Dir: filepath.Join(dir, "temporal"), Namespace: os.Getenv("TEMPORAL_NAMESPACE")})
	if err != nil {
		return err
	}
	defer func() { _ = tc.Stop() }()
	return runWds(ctx, wds, out, "WDS_DATA_DIR="+dir, "DATABASE_URL="+pg.URL("wds"), "TEMPORAL_ADDRESS="+tc.Address,
		"TEMPORAL_NAMESPACE="+tc.Namespace())
}

// runWds runs `wds dev` in a process group of its own, so Ctrl-C reaches it once, through ctx.
func runWds(ctx context.Context, wds string, out io.Writer, env ...string) error {
	cmd := exec.CommandContext(ctx, wds, "dev")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	if err := cmd.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("%s dev: %w", wds, err)
	}
	return nil
}

// ensureDatabase creates database name unless it exists.
func ensureDatabase(ctx context.Context, adminURL, name string) error {
	db, err := sql.Open("pgx", adminURL)
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		return fmt.Errorf("look for database %s: %w", name, err)
	}
	if n == 0 {
		if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
	}
	return nil
}
