package chaos

import (
	"context"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"

	"wds/internal/dev/temporalcluster"
	"wds/internal/dev/temporaldev"
)

// temporalServer is the Temporal a system runs on, which a scenario may stop and start again on the
// same address and state.
type temporalServer interface {
	address() string
	client() client.Client
	stop()
	start()
}

// temporalKind names a server and makes one for a system.
type temporalKind struct {
	name string // in the scenario's row of docs/reliability.md; empty for the dev server
	make func(s *system) temporalServer
}

// label names the subtest; scenario names the row, marking the cluster's.
func (k temporalKind) label() string {
	if k.name == "" {
		return "dev server"
	}
	return k.name
}

func (k temporalKind) scenario(what string) string {
	if k.name == "" {
		return what
	}
	return "on the " + k.name + ": " + what
}

// devServer is the Temporal CLI's dev server (SQLite, one history shard) with opts.
func devServer(opts temporaldev.Options) temporalKind {
	return temporalKind{make: func(s *system) temporalServer {
		opts.Port, opts.DBFile = freePort(s.t), filepath.Join(s.dir, "temporal.db")
		d := &devTemporal{t: s.t, opts: opts}
		d.start()
		return d
	}}
}

// cluster is the Temporal server compose deploys, on the system's own PostgreSQL
// (internal/dev/temporalcluster: persistence and SQL visibility there, 8 history shards).
var cluster = temporalKind{name: "cluster", make: func(s *system) temporalServer {
	c, err := temporalcluster.Start(s.ctx, temporalcluster.Options{Postgres: s.pg.URL("postgres"), Dir: filepath.Join(s.dir, "temporal")})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = c.Stop() }) // after the system's stop (cleanups run last first): closes the client
	return &clusterTemporal{t: s.t, c: c}
}}

// onBoth are the servers the Temporal-facing scenarios run on.
var onBoth = []temporalKind{devServer(temporaldev.Options{}), cluster}

type devTemporal struct {
	t    *testing.T
	opts temporaldev.Options
	srv  *temporaldev.Server
}

func (d *devTemporal) address() string       { return d.srv.Address }
func (d *devTemporal) client() client.Client { return d.srv.Client() }

func (d *devTemporal) start() {
	srv, err := temporaldev.Start(context.Background(), d.opts)
	if err != nil {
		d.t.Fatal(err)
	}
	d.srv = srv
}

func (d *devTemporal) stop() {
	if err := d.srv.Stop(); err != nil {
		d.t.Logf("stop Temporal: %v", err)
	}
}

type clusterTemporal struct {
	t *testing.T
	c *temporalcluster.Cluster
}

func (c *clusterTemporal) address() string       { return c.c.Address }
func (c *clusterTemporal) client() client.Client { return c.c.Client() }

func (c *clusterTemporal) start() {
	if err := c.c.StartServer(context.Background()); err != nil {
		c.t.Fatal(err)
	}
}

// stop stops the server process; the final stop at the test's end also closes the client.
func (c *clusterTemporal) stop() {
	if err := c.c.StopServer(); err != nil {
		c.t.Logf("stop Temporal: %v", err)
	}
}
