// Package temporalcluster runs the Temporal server built from source (`make bin/temporal-server`) on
// a PostgreSQL the caller owns, in the topology docker-compose.yml runs: the postgres12 plugin, the
// databases temporal and temporal_visibility (SQL visibility, so list queries over the Wds* search
// attributes run the way production's do), several history shards, the namespace and the search
// attributes registered through the operator service. The schema and the registration are the
// compose one-shots' own scripts (deploy/temporalsetup), so the two cannot drift.
package temporalcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"wds/internal/platform/temporalclient"
)

// Options shape a cluster. Postgres and Dir are required.
type Options struct {
	// Postgres is a URL of the PostgreSQL server to use (its host, port, user and password; the
	// database in it is ignored). Temporal's two databases are created there.
	Postgres string
	// Dir holds the server's configuration and its log (temporal-server.log).
	Dir string
	// Namespace defaults to "default"; Shards (history shards) to DefaultShards.
	Namespace string
	Shards    int
	// DBName and VisibilityDBName default to temporal and temporal_visibility, compose's names.
	DBName, VisibilityDBName string
	// LogLevel is the server's own (debug, info, warn, error); default warn.
	LogLevel string
}

// DefaultShards is the history shard count compose and the tests run: more than one, so workflows
// route across shards as they do in production.
const DefaultShards = 8

// Cluster is a running server with its namespace ready.
type Cluster struct {
	// Address is the frontend's gRPC address; LogFile the server's log, kept across restarts.
	Address string
	LogFile string

	bins    binaries
	config  string
	o       Options
	client  client.Client
	mu      sync.Mutex
	proc    *process
	stopped sync.Once
	stopErr error
}

// startTries is how often Start picks fresh ports: a port free when picked may be taken before the
// server binds it (another test's server, on a busy machine).
const startTries = 3

// readyTimeout bounds the wait for the server to serve and for the namespace to be set up.
const readyTimeout = 3 * time.Minute

// Start makes Temporal's schema, starts the server on free loopback ports, registers the namespace and
// search attributes, and returns once a list query over them is accepted.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	c, err := prepare(o)
	if err != nil {
		return nil, err
	}
	if err := runScript(ctx, schemaScript, c.schemaEnv()); err != nil {
		return nil, err
	}
	for range startTries {
		if err = c.startOnFreePorts(ctx); err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if err := c.setUp(ctx); err != nil { // a failure here is the script's or the server's: no retry
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func prepare(o Options) (*Cluster, error) {
	if o.Postgres == "" || o.Dir == "" {
		return nil, errors.New("temporalcluster: Options.Postgres and Options.Dir are required")
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	if o.DBName == "" {
		o.DBName = "temporal"
	}
	if o.VisibilityDBName == "" {
		o.VisibilityDBName = "temporal_visibility"
	}
	if o.LogLevel == "" {
		o.LogLevel = "warn"
	}
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("temporalcluster: %w", err)
	}
	return &Cluster{o: o, bins: bins, config: filepath.Join(o.Dir, "temporal-server.yaml"),
		LogFile: filepath.Join(o.Dir, "temporal-server.log")}, nil
}

func (c *Cluster) startOnFreePorts(ctx context.Context) error {
	p, err := freePorts()
	if err != nil {
		return err
	}
	pg, err := url.Parse(c.o.Postgres)
	if err != nil {
		return fmt.Errorf("temporalcluster: Postgres URL: %w", err)
	}
	pass, _ := pg.User.Password()
	err = writeConfig(c.config, configData{Ports: p, Shards: c.o.Shards, PGAddr: pg.Host, PGUser: pg.User.Username(),
		PGPass: pass, DBName: c.o.DBName, VisibilityDB: c.o.VisibilityDBName, LogLevel: c.o.LogLevel})
	if err != nil {
		return err
	}
	c.Address = net.JoinHostPort("127.0.0.1", strconv.Itoa(p.Frontend))
	return c.StartServer(ctx)
}

// setUp runs the registration script, then dials the namespace and waits until the frontend accepts
// a query over the search attributes (its cache of them refreshes on its own schedule).
func (c *Cluster) setUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := c.whileRunning(ctx, func(ctx context.Context) error {
		return runScript(ctx, setupScript, c.setupEnv())
	}); err != nil {
		return err
	}
	cl, err := client.Dial(client.Options{HostPort: c.Address, Namespace: c.o.Namespace, Logger: temporalclient.QuietLogger()})
	if err != nil {
		return c.failed(fmt.Errorf("temporalcluster: dial %s: %w", c.Address, err))
	}
	c.client = cl
	return c.whileRunning(ctx, func(ctx context.Context) error { return waitSearchable(ctx, cl) })
}

// Client is a client of the cluster's namespace, closed by Stop. It survives StopServer and
// StartServer: it reconnects on its own.
func (c *Cluster) Client() client.Client { return c.client }

// Pid is the running server process's id, 0 while it is stopped: the benchmark reads its CPU time.
func (c *Cluster) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return 0
	}
	return c.proc.cmd.Process.Pid
}

// Namespace is the namespace Start registered.
func (c *Cluster) Namespace() string { return c.o.Namespace }

// Stop stops the server and closes the client; later calls do nothing.
func (c *Cluster) Stop() error {
	c.stopped.Do(func() {
		if c.client != nil {
			c.client.Close()
		}
		c.stopErr = c.StopServer()
	})
	return c.stopErr
}

// process is one run of the server.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// StartServer starts the server process on the cluster's configuration (after StopServer, the same
// ports and data) and returns once its frontend reports SERVING.
func (c *Cluster) StartServer(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return errors.New("temporalcluster: the server is already running")
	}
	log, err := os.OpenFile(c.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("temporalcluster: %w", err)
	}
	cmd := exec.Command(c.bins.server, "--config-file", c.config, "--allow-no-auth", "start")
	cmd.Stdout, cmd.Stderr, cmd.Dir = log, log, c.o.Dir
	// A group of its own: a terminal's Ctrl-C reaches the program that owns the cluster, which stops
	// the server after what runs on it (make run-cluster stops wds first).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("temporalcluster: start %s: %w", c.bins.server, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); _ = log.Close(); close(p.exited) }()
	c.proc = p
	wctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := c.whileRunningLocked(wctx, func(ctx context.Context) error { return waitServing(ctx, c.Address) }); err != nil {
		c.stopLocked()
		return err
	}
	return nil
}

// StopServer asks the server to shut down (SIGTERM), waits for it, and kills it after stopGrace.
func (c *Cluster) StopServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopLocked()
}

const stopGrace = 30 * time.Second

func (c *Cluster) stopLocked() error {
	p := c.proc
	if p == nil {
		return nil
	}
	c.proc = nil
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("temporalcluster: the server did not stop within %v; killed", stopGrace)
	}
	return nil
}

// whileRunning runs wait, failing early (with the log's tail) if the server exits meanwhile.
func (c *Cluster) whileRunning(ctx context.Context, wait func(context.Context) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.whileRunningLocked(ctx, wait)
}

func (c *Cluster) whileRunningLocked(ctx context.Context, wait func(context.Context) error) error {
	if c.proc == nil {
		return errors.New("temporalcluster: the server is not running")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- wait(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			return c.failed(err)
		}
		return nil
	case <-c.proc.exited:
		cancel()
		<-done
		return c.failed(fmt.Errorf("temporalcluster: the server exited: %v", c.proc.err))
	}
}

// failed wraps err with where the server's log is and its last lines.
func (c *Cluster) failed(err error) error {
	return fmt.Errorf("%w (server log %s):\n%s", err, c.LogFile, tail(c.LogFile, 30))
}
