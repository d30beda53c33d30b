package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"

	"wds/internal/dev/temporalcluster"
	"wds/internal/platform/freeport"
)

// The Temporal servers the delivery-only line runs on (-temporal).
const (
	devServer     = "dev"
	clusterServer = "cluster"
)

// TemporalServers are the values of Options.Temporal: the CLI's dev server (SQLite, one history
// shard, the stack's own) and the cluster docker-compose.yml deploys (internal/dev/temporalcluster:
// the server built from source on PostgreSQL persistence and SQL visibility).
func TemporalServers() []string { return []string{devServer, clusterServer} }

// temporalServer is what a stack needs of its Temporal server: the dev server or the cluster.
type temporalServer interface {
	Client() client.Client
}

// on reports whether the delivery-only line runs on server.
func (o Options) on(server string) bool { return slices.Contains(o.Temporal, server) }

// clusterDeliveries runs the delivery-only line on a fresh cluster for each of o.ClusterShards, one
// after another, each on the run's PostgreSQL (as compose puts Temporal's databases beside wds's)
// with a wds worker of its own. The stack's worker must be stopped: its relay would start the
// cluster's events on the dev server.
func (e *env) clusterDeliveries(ctx context.Context, o Options, s *stack) ([]DeliveryOnly, error) {
	var out []DeliveryOnly
	for _, shards := range o.ClusterShards {
		d, err := e.clusterDelivery(ctx, o, s, shards)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (e *env) clusterDelivery(ctx context.Context, o Options, s *stack, shards int) (DeliveryOnly, error) {
	label := fmt.Sprintf("cluster with %d history shards", shards)
	dbs := []string{fmt.Sprintf("temporal_%dshards", shards), fmt.Sprintf("temporal_visibility_%dshards", shards)}
	e.logf("starting a Temporal %s", label)
	c, err := temporalcluster.Start(ctx, temporalcluster.Options{Postgres: e.cluster.URL("postgres"),
		Dir: filepath.Join(e.dir, fmt.Sprintf("temporal-%dshards", shards)), Shards: shards, DBName: dbs[0], VisibilityDBName: dbs[1]})
	if err != nil {
		return DeliveryOnly{}, err
	}
	defer func() {
		if err := c.Stop(); err != nil {
			e.logf("bench: %v", err)
		}
	}()
	metrics, err := freeport.Addr()
	if err != nil {
		return DeliveryOnly{}, err
	}
	w, err := e.start(fmt.Sprintf("worker-%dshards", shards), e.wdsEnv(s.dbURL, "TEMPORAL_ADDRESS="+c.Address,
		"TEMPORAL_NAMESPACE="+c.Namespace(), "WDS_WEBHOOK_ALLOW_PRIVATE=true", "WDS_WEBHOOK_CA_FILE="+s.rcv.caFile,
		"WDS_METRICS_ADDR="+metrics), e.wdsBin, "worker")
	if err != nil {
		return DeliveryOnly{}, err
	}
	defer w.stop()
	if err := waitHTTP(ctx, w, "http://"+metrics+"/metrics"); err != nil {
		return DeliveryOnly{}, err
	}
	cs := *s
	cs.temporal, cs.temporalAddr, cs.worker, cs.workerMetrics = c, c.Address, w, metrics
	cs.temporalDesc = "temporal-server built from source (postgres12 persistence and SQL visibility on the run's PostgreSQL)"
	if cs.shards, err = e.countShards(ctx, dbs[0]); err != nil {
		return DeliveryOnly{}, err
	}
	cs.cpu = e.clusterMeter(s, w, c, dbs)
	return e.deliveryOnly(ctx, o, &cs, label)
}

// countShards reads the history shard count the cluster made, from its shards table.
func (e *env) countShards(ctx context.Context, db string) (int, error) {
	conn, err := pgx.Connect(ctx, e.cluster.URL(db))
	if err != nil {
		return 0, fmt.Errorf("bench: connect to %s: %w", db, err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM shards").Scan(&n); err != nil {
		return 0, fmt.Errorf("bench: count the history shards: %w", err)
	}
	return n, nil
}

// clusterMeter is the stack's CPU meter with the cluster's worker and server, and PostgreSQL split:
// the backends connected to the cluster's databases are Temporal's persistence ("temporal postgres"),
// the rest wds's and the baselines' ("postgres"). A backend whose connection closed is reaped into the
// postmaster's time, and so into "postgres": Temporal's pool keeps its connections for an hour.
func (e *env) clusterMeter(s *stack, w *proc, c *temporalcluster.Cluster, dbs []string) *cpuMeter {
	dataDir := filepath.Join(e.dir, "pg", "pgdata")
	split := func(temporal bool) []int {
		all := postgresPids(dataDir)
		var out []int
		for i, pid := range all {
			if i == 0 && !temporal { // the postmaster, with its reaped children
				out = append(out, pid)
			} else if i > 0 && backendOf(pid, dbs) == temporal {
				out = append(out, pid)
			}
		}
		return out
	}
	return &cpuMeter{parts: map[string]func() []int{
		"wds serve":         func() []int { return []int{s.serve.cmd.Process.Pid} },
		"wds worker":        func() []int { return []int{w.cmd.Process.Pid} },
		"temporal":          func() []int { return []int{c.Pid()} },
		"temporal postgres": func() []int { return split(true) },
		"postgres":          func() []int { return split(false) },
		"wdsbench":          func() []int { return []int{os.Getpid()} },
	}}
}

// backendOf reports whether a PostgreSQL backend serves one of dbs: its title ("postgres: user
// database host(port) state") names its database.
func backendOf(pid int, dbs []string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "cmdline"))
	if err != nil {
		return false
	}
	for _, f := range strings.Fields(strings.ReplaceAll(string(b), "\x00", " ")) {
		if slices.Contains(dbs, f) {
			return true
		}
	}
	return false
}

// temporalCPU is Temporal's CPU in a per-event split: its server's, and its PostgreSQL backends' on
// the cluster (the dev server keeps its SQLite in its own process).
func temporalCPU(byProcess map[string]float64) float64 {
	return round2(byProcess["temporal"] + byProcess["temporal postgres"])
}
