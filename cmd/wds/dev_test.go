package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"wds/internal/platform/freeport"
)

// startDev runs `wds dev` in-process against a fresh data directory and waits until it answers.
func startDev(t *testing.T, dir, addr string) (stop func() error) {
	t.Helper()
	t.Setenv("DATABASE_URL", "")
	t.Setenv("WDS_ENCRYPTION_KEY", "")
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("WDS_DATA_DIR", dir)
	t.Setenv("WDS_HTTP_ADDR", addr)
	t.Setenv("WDS_METRICS_ADDR", "127.0.0.1:0") // any free port: tests run beside other processes
	t.Setenv("WDS_LOG_LEVEL", "warn")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- devCmd(ctx, nil) }()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		res, err := http.Get("http://" + addr + "/v1/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("wds dev exited before answering: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("wds dev did not answer /v1/health")
		}
		time.Sleep(200 * time.Millisecond)
	}
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(2 * time.Minute):
			return fmt.Errorf("wds dev did not stop")
		}
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

func readDemo(t *testing.T, dir string) demoData {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, demoFile))
	if err != nil {
		t.Fatal(err)
	}
	var d demoData
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func getWithKey(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestDevStartsStopsAndReusesItsData is `make run` in miniature: a first start creates the database
// and demo workspace, a clean stop, and a second start serves the same data with the same key.
func TestDevStartsStopsAndReusesItsData(t *testing.T) {
	// Not t.TempDir: its 0700 parents would keep the postgres user out when the tests run as root.
	dir, err := os.MkdirTemp("", "wds-devtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // as `wds dev` makes ./.wds
		t.Fatal(err)
	}
	addr := freeAddr(t)
	stop := startDev(t, dir, addr)
	demo := readDemo(t, dir)
	if code := getWithKey(t, "http://"+addr+"/v1/products", demo.ReadKey); code != http.StatusOK {
		t.Fatalf("products with the demo key: %d", code)
	}
	if err := stop(); err != nil {
		t.Fatalf("first stop: %v", err)
	}

	stop = startDev(t, dir, addr)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("second stop: %v", err)
		}
	}()
	if again := readDemo(t, dir); again != demo {
		t.Fatal("second start made a new demo workspace instead of reusing the first")
	}
	if code := getWithKey(t, "http://"+addr+"/v1/vendors", demo.ReadKey); code != http.StatusOK {
		t.Fatalf("vendors after restart: %d", code)
	}
	t.Setenv("DATABASE_URL", "")
	org := mustAdmin(t, "org", "create", "--name", "via the dev database file")
	if org["id"] == "" {
		t.Fatal("admin did not reach the dev database")
	}
}
