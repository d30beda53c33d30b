package bench

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"wds/internal/dev/pgcluster"
)

// env is everything one run starts: a private PostgreSQL cluster, the wds binary and the processes
// it runs. Every piece is stopped by close, whatever failed on the way.
type env struct {
	dir        string
	cluster    *pgcluster.Cluster
	pgbenchBin string
	wdsBin     string
	encKey     string
	procs      []*proc
	closers    []func() // in-process pieces (receiver, Temporal, pools), closed in reverse order
	keepDirs   bool
	log        io.Writer
	// source names the code measured, read once when the run starts: the binaries are built from the
	// tree as it is then, and a commit made during a long run must not be named by its later parts.
	source string
}

// clusterSettings is how the cluster runs; every baseline and every measurement uses the same one.
const clusterSettings = "pgcluster non-durable mode (fsync=off, synchronous_commit=off, " +
	"full_page_writes=off), pg_stat_statements loaded (track=all, track_planning=on), lock waits logged (log_lock_waits; deadlock_timeout 1 ms during the delivery-only rounds only), " +
	"autovacuum runs logged, otherwise PostgreSQL defaults (shared_buffers 128MB), max_connections=200"

// vacuumSettings have the run's cluster log every autovacuum and autoanalyze with its length and
// what it read and wrote, so that a window's slow requests can be set beside the vacuums that ran
// then (the noisy-neighbour line's first quiet window follows a load of a million rows). -keep
// keeps the log (pg/postgres.log in the run's directory).
var vacuumSettings = []string{"log_autovacuum_min_duration=0"}

func newEnv(ctx context.Context, o Options) (*env, error) {
	dir, err := os.MkdirTemp("", "wdsbench-")
	if err != nil {
		return nil, fmt.Errorf("bench: temp dir: %w", err)
	}
	e := &env{dir: dir, keepDirs: o.Keep, log: o.Log, source: source(ctx)}
	// PostgreSQL runs as the postgres user when we are root: it must be able to enter the directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		e.close()
		return nil, fmt.Errorf("bench: %w", err)
	}
	if e.pgbenchBin, err = findPgbench(); err != nil {
		e.close()
		return nil, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	e.encKey = base64.StdEncoding.EncodeToString(key)
	if e.wdsBin, err = buildWDS(ctx, o.WDSBinary, dir); err != nil {
		e.close()
		return nil, err
	}
	// Non-durable: the figures are ratios against pgbench on this same cluster, and fsync on a shared
	// disk would add noise that belongs to neither side.
	if e.cluster, err = pgcluster.Start(ctx, pgcluster.Options{Dir: filepath.Join(dir, "pg"), Settings: slices.Concat(statementSettings, lockSettings, vacuumSettings)}); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// findPgbench finds the pgbench of the server that runs the cluster (pg_ctl may be a symlink into
// the version's directory), else any on PATH.
func findPgbench() (string, error) {
	dir, err := pgcluster.BinDir()
	if err != nil {
		return "", err
	}
	if ctl, err := filepath.EvalSymlinks(filepath.Join(dir, "pg_ctl")); err == nil {
		p := filepath.Join(filepath.Dir(ctl), "pgbench")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("pgbench")
	if err != nil {
		return "", fmt.Errorf("bench: pgbench not found beside the PostgreSQL server programs nor on PATH "+
			"(Debian: apt-get install postgresql-contrib or postgresql-client): %w", err)
	}
	return p, nil
}

// buildWDS returns the wds binary to run: the one given, or a fresh build of the service's cmd/wds so
// the benchmark always measures the code beside it. It builds in the service's own module (where
// go.mod replaces wds), whose go.sum covers every dependency of the program.
func buildWDS(ctx context.Context, given, dir string) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	root, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "wds").Output()
	if err != nil {
		return "", fmt.Errorf("bench: find the wds module: %w", err)
	}
	out := filepath.Join(dir, "wds")
	cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=false", "-o", out, "./cmd/wds")
	cmd.Dir = strings.TrimSpace(string(root))
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: build wds: %w: %s", err, b)
	}
	return out, nil
}

// createDB makes a database on the cluster and returns its URL.
func (e *env) createDB(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, e.cluster.URL("postgres"))
	if err != nil {
		return "", fmt.Errorf("bench: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("bench: create database %s: %w", name, err)
	}
	return e.cluster.URL(name), nil
}

// wdsEnv is the environment of a wds subprocess against databaseURL.
func (e *env) wdsEnv(databaseURL string, extra ...string) []string {
	return append(append(os.Environ(),
		"DATABASE_URL="+databaseURL,
		"WDS_ENCRYPTION_KEY="+e.encKey,
		"WDS_DATA_DIR="+filepath.Join(e.dir, "wdsdata"),
		"WDS_LOG_LEVEL=warn",
		"WDS_LOG_FORMAT=text",
	), extra...)
}

// runWDS runs a short wds command (migrate, admin) to completion and returns its stdout.
func (e *env) runWDS(ctx context.Context, environ []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, e.wdsBin, args...)
	cmd.Env = environ
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bench: wds %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// proc is a long-running subprocess whose output goes to a log file in the run's directory.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// start launches a subprocess; stop (via env.close or proc.stop) ends it with SIGTERM.
func (e *env) start(name string, environ []string, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(e.dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = environ, f, f
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("bench: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); _ = f.Close(); close(p.done) }()
	e.procs = append(e.procs, p)
	return p, nil
}

// exited reports the process's end as an error naming its log, or nil while it runs.
func (p *proc) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("bench: %s exited (%v): %s", p.name, p.err, p.tail())
	default:
		return nil
	}
}

// tail is the end of the process's log, for error messages.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// stop asks the process to drain (SIGTERM) and kills it if it has not ended in 30 s.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// peakRSS is the process's high-water resident set (VmHWM), in bytes.
func (p *proc) peakRSS() (int64, error) { return peakRSS(p.cmd.Process.Pid, p.name) }

// peakRSS is the high-water resident set (VmHWM) of process pid, named name in errors, in bytes.
func peakRSS(pid int, name string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: read %s status: %w", name, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("bench: parse VmHWM of %s: %w", name, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("bench: no VmHWM for %s", name)
}

// waitHTTP polls url until it answers 200, the process dies, or 60 s pass.
func waitHTTP(ctx context.Context, p *proc, url string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := p.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %s did not answer %s within 60 s: %s", p.name, url, p.tail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// close stops every process and the cluster and removes the run's directory unless asked to keep it.
func (e *env) close() {
	for i := len(e.procs) - 1; i >= 0; i-- {
		e.procs[i].stop()
	}
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	var errs []error
	if e.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		errs = append(errs, e.cluster.Stop(ctx))
		cancel()
	}
	if e.keepDirs {
		fmt.Fprintf(e.log, "bench: kept %s\n", e.dir)
	} else {
		errs = append(errs, os.RemoveAll(e.dir))
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(e.log, "bench: cleanup: %v\n", err)
	}
}
