// Package chaos proves that wds loses no event and sends no duplicate side effect under faults: it
// runs the real `wds serve` and `wds worker` processes against a private PostgreSQL cluster, the
// Temporal dev server and a real HTTPS receiver, keeps a steady stream of orders coming, and stops,
// kills or restarts the parts under it (docs/reliability.md).
package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/internal/dev/pgcluster"
	"wds/internal/dev/temporaldev"
	"wds/internal/platform/database"
	"wds/internal/platform/freeport"
	"wds/internal/platform/secrets"
)

var (
	long       = flag.Bool("chaos.long", false, "run the scenarios at full length (make chaos)")
	reportFile = flag.String("chaos.report", "", "write the results table into this Markdown file")
	wdsBin     string
	// binDir holds the binaries the tests build: this tree's wds and a previous release's.
	binDir string
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "wds-chaos-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir, wdsBin = dir, filepath.Join(dir, "wds")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version="+buildID, "-o", wdsBin, "wds/cmd/wds").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build wds: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		code = writeReport()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// system is one deployment: its own PostgreSQL cluster and database, a Temporal dev server that
// keeps its state on disk (so it can be stopped and started), the receiver, wds serve and workers.
type system struct {
	t   *testing.T
	ctx context.Context
	dir string

	pg       *pgcluster.Cluster
	pgDir    string
	db       *gorm.DB // the test's own connection, for setup checks and the final audit
	env      []string // every wds process's environment
	temporal temporalServer

	rcv     *receiver
	serve   *proc
	base    string
	workers []*proc
	// bin is the wds binary the system's next process runs: this tree's, or a previous release's.
	bin string
	// retired are the processes a deploy replaced, whose logs are still checked.
	retired []*proc

	ownerToken, key string
}

func newSystem(t *testing.T, slowReceiver time.Duration) *system {
	t.Helper()
	return newSystemOn(t, slowReceiver, devServer(temporaldev.Options{}))
}

// newSystemOn is newSystem on the Temporal server kind makes (its port and state are the system's
// own), with env added to every wds process's environment (a later value wins).
func newSystemOn(t *testing.T, slowReceiver time.Duration, kind temporalKind, env ...string) *system {
	t.Helper()
	return newSystemOf(t, wdsBin, slowReceiver, kind, env...)
}

// newSystemOf is newSystemOn with every process, the schema migration included, run by bin.
func newSystemOf(t *testing.T, bin string, slowReceiver time.Duration, kind temporalKind, env ...string) *system {
	t.Helper()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "wds-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	// PostgreSQL runs as the postgres user when the tests run as root: it must enter the directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &system{t: t, ctx: ctx, dir: dir, pgDir: filepath.Join(dir, "pg"), bin: bin}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(dir)
		} else {
			t.Logf("processes' logs kept in %s", dir)
		}
	})
	s.startPostgres()
	t.Cleanup(func() { _ = s.pg.Stop(context.Background()) })
	dbURL := s.createDatabase()
	s.rcv = newReceiver(t, dir, slowReceiver)
	s.temporal = kind.make(s)
	t.Cleanup(s.temporal.stop)
	s.env = append(os.Environ(),
		"DATABASE_URL="+dbURL,
		"WDS_ENCRYPTION_KEY="+secrets.GenerateKey(),
		"WDS_DATA_DIR="+filepath.Join(dir, "wdsdata"),
		"TEMPORAL_ADDRESS="+s.temporal.address(),
		"WDS_WEBHOOK_ALLOW_PRIVATE=true",
		"WDS_WEBHOOK_CA_FILE="+s.rcv.caFile,
		"WDS_WEBHOOK_RETRY_SCHEDULE=1s,2s",
		"WDS_LOG_FORMAT=json",
	)
	s.env = append(s.env, env...)
	s.wds("migrate", "up")
	if s.db, err = database.Open(ctx, dbURL, quietLog()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(s.db) })
	s.startServe()
	s.workspace()
	return s
}

func (s *system) startPostgres() {
	pg, err := pgcluster.Start(s.ctx, pgcluster.Options{Dir: s.pgDir})
	if err != nil {
		s.t.Fatal(err)
	}
	s.pg = pg
}

func (s *system) createDatabase() string {
	admin, err := database.Open(s.ctx, s.pg.URL("postgres"), quietLog())
	if err != nil {
		s.t.Fatal(err)
	}
	defer database.Close(admin)
	if err := admin.Exec("CREATE DATABASE wds").Error; err != nil {
		s.t.Fatal(err)
	}
	return s.pg.URL("wds")
}

// startServe runs `wds serve` and waits until it answers.
func (s *system) startServe() {
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(freePort(s.t)))
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(s.t))
	env := append(s.env, "WDS_HTTP_ADDR="+addr, "WDS_METRICS_ADDR="+metricsAddr)
	name := "serve"
	if s.serve != nil {
		s.retired = append(s.retired, s.serve)
		name = fmt.Sprintf("serve-%d", len(s.retired)+1)
	}
	s.serve = start(s.t, s.dir, name, env, s.bin, "serve")
	s.serve.metrics = metricsAddr
	s.base = "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.base + "/v1/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if err := s.serve.exited(); err != nil {
			s.t.Fatal(err)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("wds serve not ready within 60 s: %s", s.serve.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startWorker runs one more `wds worker` (Temporal worker and outbox relay).
func (s *system) startWorker() *proc {
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(s.t))
	env := append(s.env, "WDS_METRICS_ADDR="+metricsAddr)
	p := start(s.t, s.dir, fmt.Sprintf("worker-%d", len(s.workers)+1), env, s.bin, "worker")
	p.metrics = metricsAddr
	s.workers = append(s.workers, p)
	return p
}

// workspace makes an org, a store, an owner and an integration key with the CLI, as an operator does.
func (s *system) workspace() {
	org := s.wds("admin", "org", "create", "--name", "Chaos")["id"]
	store := s.wds("admin", "store", "create", "--org", org, "--name", "Main")["id"]
	owner := s.wds("admin", "user", "create", "--org", org, "--email", "owner@chaos.test", "--role", "owner")
	s.ownerToken = owner["token"]
	s.key = s.wds("admin", "integration-key", "create", "--org", org, "--store", store, "--actor", owner["id"],
		"--scopes", "orders:write", "--rate-limit", "6000")["key"]
}

// endpoint subscribes a receiver path to order.created over the Operator API.
func (s *system) endpoint(path string, b behaviour, maxAttempts int) string {
	return s.endpointWith(path, b, maxAttempts, nil)
}

// endpointWith is endpoint with custom headers, whose values the receiver checks on every POST.
func (s *system) endpointWith(path string, b behaviour, maxAttempts int, headers map[string]string) string {
	url := s.rcv.add(path, b)
	params := map[string]any{"p_url": url, "p_event_types": []string{"order.created"}, "p_max_attempts": maxAttempts}
	if headers != nil {
		params["p_headers"] = headers
	}
	body, _ := json.Marshal(params)
	req, _ := http.NewRequest(http.MethodPost, s.base+"/admin/v1/rpc/outbound_webhook_create", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.ownerToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ ID, Secret string }
	b2, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b2, &out) != nil {
		s.t.Fatalf("create endpoint: %d %s", resp.StatusCode, b2)
	}
	s.rcv.created(path, out.ID, out.Secret, headers)
	return out.ID
}

// wds runs a short wds command and decodes its one JSON object.
func (s *system) wds(args ...string) map[string]string {
	s.t.Helper()
	cmd := exec.Command(s.bin, args...)
	cmd.Env = s.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("wds %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	var fields map[string]any
	_ = json.Unmarshal(out, &fields)
	res := map[string]string{}
	for k, v := range fields {
		if str, ok := v.(string); ok {
			res[k] = str
		}
	}
	return res
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func quietLog() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}
