package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"

	"wds/internal/platform/config"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/platform/temporalclient"
	"wds/internal/versions"
)

func init() {
	registerTemporalAdmin("version list", "the worker versions, which one new chains start on, and the chains each still holds", versionList)
	registerTemporalAdmin("version promote", "make a version current: new delivery chains start on it", versionPromote)
	registerTemporalAdmin("version ramp", "start a share of new delivery chains on a version, the rest on the current one", versionRamp)
	registerTemporalAdmin("version rollback", "make the previous version current again", versionRollback)
}

// versionOps are the Worker Deployment's reads and routing changes (versions.Deployments).
type versionOps interface {
	List(ctx context.Context) (versions.Deployment, error)
	Promote(ctx context.Context, buildID string) (versions.Change, error)
	Ramp(ctx context.Context, buildID string, percent float32) (versions.Change, error)
	Rollback(ctx context.Context) (versions.Change, error)
}

func versionList(*flag.FlagSet) runFunc {
	return func(ctx context.Context, env *adminEnv) (any, error) { return env.versions.List(ctx) }
}

func versionPromote(fs *flag.FlagSet) runFunc {
	build := fs.String("build-id", "", "the version's build id (wds admin version list shows them); required unless --unversioned")
	unversioned := fs.Bool("unversioned", false, "send new chains to the unversioned workers of the release before versioning")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		if (*build == "") == !*unversioned {
			return nil, problem.Fail(paging.ErrInvalidParameter, "give one of --build-id and --unversioned")
		}
		return env.versions.Promote(ctx, *build)
	}
}

func versionRamp(fs *flag.FlagSet) runFunc {
	build := stringFlag(fs, "build-id", "the version's build id")
	percent := &requiredPercent{}
	fs.Var(percent, "percent", "the share of new chains that start on it, in percent: above 0 and at most 100 (required)")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		return env.versions.Ramp(ctx, *build, percent.p)
	}
}

// requiredPercent is a flag holding a share in percent that must be given; versions.Ramp checks
// its range.
type requiredPercent struct {
	p   float32
	set bool
}

func (r *requiredPercent) String() string { return strconv.FormatFloat(float64(r.p), 'g', -1, 32) }

func (r *requiredPercent) Set(v string) error {
	p, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 32)
	if err != nil {
		return errors.New("must be a number of percent such as 10 or 2.5")
	}
	r.p, r.set = float32(p), true
	return nil
}

func versionRollback(*flag.FlagSet) runFunc {
	return func(ctx context.Context, env *adminEnv) (any, error) { return env.versions.Rollback(ctx) }
}

// temporalDialTimeout bounds how long a version command waits for Temporal to answer.
const temporalDialTimeout = 10 * time.Second

// runOnTemporal runs a version command with a client of the deployment's Temporal: TEMPORAL_ADDRESS,
// or the one `wds dev` recorded in WDS_DATA_DIR, or localhost:7233. These commands need no database.
func runOnTemporal(ctx context.Context, cfg *config.Config, log logrus.FieldLogger, run runFunc) (any, error) {
	if cfg.TemporalAddress == "" {
		cfg.TemporalAddress = devTemporalAddress(cfg)
	}
	opts, err := temporalclient.ClientOptions(cfg)
	if err != nil {
		return nil, problem.Fail(paging.ErrInvalidParameter, "%v", err)
	}
	dctx, cancel := context.WithTimeout(ctx, temporalDialTimeout)
	defer cancel()
	c, err := client.DialContext(dctx, opts)
	if err != nil {
		return nil, problem.Fail(versions.ErrTemporalUnavailable, "cannot reach Temporal at %s (TEMPORAL_ADDRESS): %v", opts.HostPort, err)
	}
	defer c.Close()
	env := &adminEnv{cfg: cfg, log: log, versions: versions.Deployments{Temporal: c, Name: cfg.DeploymentName}}
	return run(ctx, env)
}

// devTemporalFile is where `wds dev` records the address of the Temporal it runs on.
const devTemporalFile = "temporal_address"

// devTemporalAddress is the address `wds dev` recorded in its data directory, or "" for the default.
func devTemporalAddress(cfg *config.Config) string {
	b, err := os.ReadFile(filepath.Join(cfg.DataDir, devTemporalFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// recordDevTemporal writes the address of wds dev's Temporal into its data directory, for `wds admin
// version` started with the same WDS_DATA_DIR.
func recordDevTemporal(cfg *config.Config, address string) error {
	if err := os.WriteFile(filepath.Join(cfg.DataDir, devTemporalFile), []byte(address+"\n"), 0o600); err != nil {
		return fmt.Errorf("record Temporal's address: %w", err)
	}
	return nil
}
