package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"wds/internal/apikeys"
	"wds/internal/platform/database"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

// runMainEnv makes the test binary the wds program: started with it set, the binary runs main with
// its arguments, so lifecycle tests drive the real program, signal handling included, without
// building (and cleaning up) a second binary.
const runMainEnv = "WDS_TEST_RUN_MAIN"

func init() {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
}

// syncBuf collects a child process's output while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// process is a running `wds` child; exited is closed when it ends, and err is then its exit status.
type process struct {
	cmd    *exec.Cmd
	out    *syncBuf
	exited chan struct{}
	err    error
}

func startWDS(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(os.Args[0], args...), out: &syncBuf{}, exited: make(chan struct{})}
	p.cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill() // no-op when it has exited
		<-p.exited
	})
	return p
}

// waitReady polls /v1/ready until the server answers 200 or the process dies.
func (p *process) waitReady(t *testing.T, addr string) {
	t.Helper()
	for {
		if res, err := http.Get("http://" + addr + "/v1/ready"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("wds exited before it was ready: %v\n%s", p.err, p.out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestSIGTERMLetsAnInFlightRequestFinish(t *testing.T) {
	url := pgtest.URL(t)
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	key := readKeyFor(t, db)
	addr := freeAddr(t)
	p := startWDS(t, []string{"DATABASE_URL=" + url, "WDS_ENCRYPTION_KEY=" + secrets.GenerateKey(),
		"WDS_HTTP_ADDR=" + addr, "WDS_METRICS_ADDR=127.0.0.1:0", "TEMPORAL_ADDRESS=127.0.0.1:1"}, "serve")
	p.waitReady(t, addr)

	// Hold the vendors table so a list request blocks inside its query: an in-flight request whose
	// end the test controls, with no sleep standing in for "slow".
	lock := db.Begin()
	defer lock.Rollback()
	if err := lock.Exec("LOCK TABLE vendors IN ACCESS EXCLUSIVE MODE").Error; err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/vendors", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		answered <- answer{status: res.StatusCode, body: string(b)}
	}()
	waitFor(t, "the request to wait on the lock", func() bool {
		var n int64
		db.Raw("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'vendors'::regclass").Scan(&n)
		return n > 0
	})

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Draining has begun once the listener is closed: new connections are refused...
	waitFor(t, "the listener to close", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	// ...while the process still waits for the request it accepted.
	select {
	case <-p.exited:
		t.Fatalf("wds exited with a request in flight: %v\n%s", p.err, p.out.String())
	case a := <-answered:
		t.Fatalf("request ended before its query could run: %+v", a)
	default:
	}

	if err := lock.Rollback().Error; err != nil {
		t.Fatal(err)
	}
	a := <-answered
	if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `"rows":[]`) {
		t.Fatalf("in-flight request was cut off: %+v", a)
	}
	<-p.exited
	if p.err != nil {
		t.Fatalf("wds serve exited with %v after draining\n%s", p.err, p.out.String())
	}
	if !strings.Contains(p.out.String(), "draining in-flight requests") {
		t.Errorf("shutdown was not logged:\n%s", p.out.String())
	}
}

func TestServeRefusesAnOlderSchema(t *testing.T) {
	url := pgtest.ClusterURL(t, "unmigrated_serve")
	p := startWDS(t, []string{"DATABASE_URL=" + url, "WDS_ENCRYPTION_KEY=" + secrets.GenerateKey(),
		"WDS_HTTP_ADDR=" + freeAddr(t), "WDS_METRICS_ADDR=127.0.0.1:0"}, "serve")
	<-p.exited
	var exit *exec.ExitError
	if err := p.err; !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("wds serve on an unmigrated database: %v, want exit 1\n%s", p.err, p.out.String())
	}
	if !strings.Contains(p.out.String(), "run `wds migrate up` first") {
		t.Errorf("the refusal does not say what to do:\n%s", p.out.String())
	}
}

func TestServeNamesTheVariableOfABadSetting(t *testing.T) {
	p := startWDS(t, []string{"DATABASE_URL=postgres://127.0.0.1:1/none", "WDS_METRICS_ADDR=9090"}, "serve")
	<-p.exited
	if out := p.out.String(); !strings.Contains(out, "WDS_METRICS_ADDR") || !strings.Contains(out, ":9090") {
		t.Errorf("a bad WDS_METRICS_ADDR is not named with its fix:\n%s", out)
	}
}

func readKeyFor(t *testing.T, db *gorm.DB) string {
	t.Helper()
	ctx := context.Background()
	org, err := workspace.NewService(db).CreateOrg(ctx, "Draining")
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := workspace.NewService(db).CreateUser(ctx, org.ID, "owner@draining.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := apikeys.NewService(db, nil).CreateReadKey(ctx, apikeys.NewReadKey{OrgID: org.ID, ActorID: owner.ID, Scope: models.ScopeReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// waitFor polls cond for up to two minutes: long enough for a loaded CI machine, short enough that a
// hang fails this test instead of the whole run's deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
