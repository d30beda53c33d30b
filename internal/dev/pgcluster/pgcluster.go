// Package pgcluster creates, starts and stops a private PostgreSQL cluster from the server programs
// installed on the machine. `wds dev` keeps one in its data directory; tests make a throwaway one.
package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"wds/internal/platform/freeport"
)

// ErrNoServer means no PostgreSQL server programs were found.
var ErrNoServer = errors.New("no PostgreSQL server programs found on PATH or under /usr/lib/postgresql/*/bin; " +
	"install them (Debian: apt-get install postgresql) or set DATABASE_URL")

// Options shape a cluster.
type Options struct {
	// Dir holds the data directory, log and port file.
	Dir string
	// Durable false turns off fsync: right for tests, never for data anyone keeps.
	Durable bool
	// Settings are server settings (name=value) given at start, such as the benchmark's
	// shared_preload_libraries=pg_stat_statements; a value with spaces in single quotes, as pg_ctl hands
	// them to the server through a shell.
	Settings []string
}

// Cluster is a running private PostgreSQL server.
type Cluster struct {
	dataDir string
	logFile string
	bin     string
	port    int
	runAs   string
}

// BinDir finds the directory holding initdb and pg_ctl.
func BinDir() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoServer
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// Start initialises the cluster on first use and starts it. PostgreSQL refuses to run as root, so
// when we are root the server runs as the `postgres` user, which then owns the directory.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{dataDir: filepath.Join(o.Dir, "pgdata"), logFile: filepath.Join(o.Dir, "postgres.log"), bin: bin}
	if os.Geteuid() == 0 {
		c.runAs = "postgres"
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := c.chown(o.Dir); err != nil {
		return nil, err
	}
	if err := c.reachable(ctx, o.Dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(c.dataDir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := c.run(ctx, "initdb", "-D", c.dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
			return nil, err
		}
	}
	if c.port, err = c.choosePort(o.Dir); err != nil {
		return nil, err
	}
	opts := fmt.Sprintf("-p %d -k '' -c listen_addresses=127.0.0.1 -c max_connections=200", c.port)
	if !o.Durable {
		opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	for _, setting := range o.Settings {
		opts += " -c " + setting
	}
	if err := c.run(ctx, "pg_ctl", "-D", c.dataDir, "-l", c.logFile, "-o", opts, "-w", "-t", "60", "start"); err != nil {
		return nil, err
	}
	return c, nil
}

// choosePort keeps the port of an earlier start (so a saved DATABASE_URL stays right) and otherwise
// takes a free one.
func (c *Cluster) choosePort(dir string) (int, error) {
	file := filepath.Join(dir, "postgres.port")
	if b, err := os.ReadFile(file); err == nil {
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && portFree(p) {
			return p, nil
		}
	}
	p, err := freeport.Port()
	if err != nil {
		return 0, fmt.Errorf("pgcluster: %w", err)
	}
	if err := os.WriteFile(file, []byte(strconv.Itoa(p)), 0o644); err != nil {
		return 0, fmt.Errorf("pgcluster: %w", err)
	}
	return p, nil
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// URL is a connection URL for database name on this cluster.
func (c *Cluster) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, database)
}

// LogFile is the file the server logs to.
func (c *Cluster) LogFile() string { return c.logFile }

// Port is the TCP port the server listens on (loopback only).
func (c *Cluster) Port() int { return c.port }

// Stop shuts the server down quickly and cleanly.
func (c *Cluster) Stop(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "-D", c.dataDir, "-m", "fast", "-w", "stop")
}

func (c *Cluster) run(ctx context.Context, prog string, args ...string) error {
	path := filepath.Join(c.bin, prog)
	var cmd *exec.Cmd
	if c.runAs != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.runAs, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgcluster: %s: %w: %s", prog, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// reachable checks that the server's user can enter dir: a parent directory private to root (such as
// /root or a 0700 temporary directory) would otherwise fail deep inside initdb.
func (c *Cluster) reachable(ctx context.Context, dir string) error {
	if c.runAs == "" {
		return nil
	}
	if err := exec.CommandContext(ctx, "runuser", "-u", c.runAs, "--", "test", "-x", dir).Run(); err != nil {
		return fmt.Errorf("pgcluster: PostgreSQL runs as the %q user, which cannot enter %s: make its parent "+
			"directories traversable (chmod o+x) or choose a data directory elsewhere (WDS_DATA_DIR)", c.runAs, dir)
	}
	return nil
}

func (c *Cluster) chown(dir string) error {
	if c.runAs == "" {
		return nil
	}
	u, err := user.Lookup(c.runAs)
	if err != nil {
		return fmt.Errorf("pgcluster: running as root needs the %q user to run PostgreSQL: %w", c.runAs, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}
