package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"wds/internal/platform/freeport"
	"wds/internal/platform/temporalclient"
	"wds/workflows/contract"
)

// syncBuffer collects the runner's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var temporalLine = regexp.MustCompile(`(?m)^\s+Temporal\s+(127\.0\.0\.1:\d+)$`)

// TestRunClusterServesWdsOnTheCluster runs what `make run-cluster` runs: wds answers ready, its worker
// polls the webhook task queue on the built server (not a dev server), and Ctrl-C stops everything.
func TestRunClusterServesWdsOnTheCluster(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "wds")
	if out, err := exec.Command("go", "build", "-o", bin, "wds/cmd/wds").CombinedOutput(); err != nil {
		t.Fatalf("build wds: %v\n%s", err, out)
	}
	dir, err := os.MkdirTemp("", "wds-runcluster-") // PostgreSQL's user must reach it: not under t.TempDir
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	t.Setenv("WDS_HTTP_ADDR", addr)
	t.Setenv("WDS_METRICS_ADDR", "127.0.0.1:0")
	t.Setenv("WDS_LOG_LEVEL", "warn")
	for _, k := range []string{"DATABASE_URL", "TEMPORAL_ADDRESS", "WDS_ENCRYPTION_KEY", "TEMPORAL_NAMESPACE"} {
		t.Setenv(k, "")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, bin, dir, out) }()
	waitReady(t, addr, done, out)

	m := temporalLine.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("wds dev does not print the cluster's address:\n%s", out)
	}
	tc, err := client.Dial(client.Options{HostPort: m[1], Logger: temporalclient.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	info, err := tc.WorkflowService().GetSystemInfo(ctx, &workflowservice.GetSystemInfoRequest{})
	if err != nil || info.GetServerVersion() == "" {
		t.Fatalf("system info %v: %v", info, err)
	}
	waitFor(t, "the worker polling "+contract.TaskQueue, func() bool {
		resp, err := tc.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{Namespace: "default",
			TaskQueue: &taskqueuepb.TaskQueue{Name: contract.TaskQueue}, TaskQueueType: enumspb.TASK_QUEUE_TYPE_WORKFLOW})
		return err == nil && len(resp.GetPollers()) > 0
	})
	if _, err := os.Stat(filepath.Join(dir, "temporal", "temporal-server.log")); err != nil {
		t.Errorf("no server log in the data directory: %v", err)
	}
	listenOnTheCluster(ctx, t, bin, dir)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run-cluster stopped with %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("run-cluster did not stop")
	}
	if c, err := net.DialTimeout("tcp", m[1], time.Second); err == nil {
		c.Close()
		t.Error("the Temporal server still answers after run-cluster stopped")
	}
}

// listenOnTheCluster does what the README's tour shows for the cluster run: `wds listen` and `wds
// admin` with WDS_DATA_DIR naming its state find its database and key, so the endpoint listen
// registers is sealed under the key the cluster's worker holds, and an event an admin command fires
// arrives at the laptop.
func listenOnTheCluster(ctx context.Context, t *testing.T, bin, dir string) {
	t.Helper()
	var demo struct {
		OrgID   string `json:"org_id"`
		StoreID string `json:"store_id"`
		OwnerID string `json:"owner_id"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "demo.json"))
	if err == nil {
		err = json.Unmarshal(b, &demo)
	}
	if err != nil {
		t.Fatalf("the cluster run's demo workspace: %v", err)
	}
	env := append(os.Environ(), "WDS_DATA_DIR="+dir)
	listen := exec.CommandContext(ctx, bin, "listen", "--org", demo.OrgID, "--actor", demo.OwnerID, "--addr", freeAddr(t),
		"--events", "vendor.created")
	out := &syncBuffer{}
	listen.Env, listen.Stdout, listen.Stderr = env, out, out
	listen.Cancel = func() error { return listen.Process.Signal(os.Interrupt) }
	if err := listen.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = listen.Cancel(); _ = listen.Wait() }()
	defer func() {
		if t.Failed() {
			t.Logf("wds listen printed:\n%s", out)
		}
	}()
	waitFor(t, "wds listen on the cluster to be ready", func() bool { return strings.Contains(out.String(), "Ready: endpoint ") })
	admin := exec.CommandContext(ctx, bin, "admin", "vendor", "create", "--org", demo.OrgID, "--store", demo.StoreID,
		"--actor", demo.OwnerID, "--name", "Cluster Supplies")
	admin.Env = env
	if b, err := admin.CombinedOutput(); err != nil {
		t.Fatalf("wds admin on the cluster's state: %v\n%s", err, b)
	}
	waitFor(t, "the vendor's event at wds listen", func() bool { return strings.Contains(out.String(), "vendor.created") })
}

func waitReady(t *testing.T, addr string, done <-chan error, out *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		if res, err := http.Get("http://" + addr + "/v1/ready"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK && temporalLine.MatchString(out.String()) {
				return
			}
		}
		select {
		case err := <-done:
			t.Fatalf("run-cluster exited before wds was ready: %v\n%s", err, out)
		case <-time.After(250 * time.Millisecond):
		}
	}
	t.Fatalf("wds never became ready on the cluster:\n%s", out)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	a, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return a
}
