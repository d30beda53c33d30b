package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.temporal.io/sdk/client"

	"wds/internal/dev/temporaldev"
	"wds/internal/platform/config"
	"wds/internal/platform/secrets"
	"wds/internal/platform/temporalclient"
	"wds/test/pgtest"
)

// scrape returns the metrics text a process serves, or "" while it does not answer.
func scrape(addr string) string {
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return ""
	}
	return string(b)
}

func TestWorkerExposesTemporalMetricsAndStopsOnSIGTERM(t *testing.T) {
	srv, err := temporaldev.Start(context.Background(), temporaldev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	metricsAddr := freeAddr(t)
	p := startWDS(t, []string{"DATABASE_URL=" + pgtest.URL(t), "WDS_ENCRYPTION_KEY=" + secrets.GenerateKey(),
		"TEMPORAL_ADDRESS=" + srv.Address, "WDS_METRICS_ADDR=" + metricsAddr, "WDS_LOG_LEVEL=info"}, "worker")

	// The worker's own metrics listener carries the Temporal SDK's metrics of its pollers on
	// wds-webhooks next to the outbox gauges.
	// Pollers start one by one after the listener is up, so wait for every series, not the first.
	wants := []string{`task_queue="wds-webhooks"`, "temporal_poller_start_total{", "temporal_num_pollers{",
		`namespace="default"`, `wds_outbox_backlog{queue="events"} 0`}
	waitFor(t, "the worker's Temporal metrics "+strings.Join(wants, ", "), func() bool {
		select {
		case <-p.exited:
			t.Fatalf("wds worker exited: %v\n%s", p.err, p.out.String())
		default:
		}
		body := scrape(metricsAddr)
		for _, want := range wants {
			if !strings.Contains(body, want) {
				return false
			}
		}
		return true
	})

	// A versioned worker: deployment wds, the binary's version as build id, in its start-up line, and
	// on a deployment that never had a current version it makes its own current, so new workflows
	// start on it without anyone naming a version (WDS_PROMOTE_VERSION first).
	for _, want := range []string{`"msg":"webhook worker started"`, `"deployment":"wds"`, `"build_id":"` + version + `"`, `"promote_version":"first"`} {
		if !strings.Contains(p.out.String(), want) {
			t.Errorf("the start-up log lacks %s:\n%s", want, p.out.String())
		}
	}
	waitFor(t, "the worker's version to become current", func() bool {
		d, err := srv.Client().WorkerDeploymentClient().GetHandle("wds").Describe(context.Background(), client.WorkerDeploymentDescribeOptions{})
		cur := d.Info.RoutingConfig.CurrentVersion
		return err == nil && cur != nil && cur.BuildID == version
	})

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	if p.err != nil {
		t.Fatalf("wds worker exited with %v on SIGTERM\n%s", p.err, p.out.String())
	}
	if !strings.Contains(p.out.String(), "webhook worker stopped") {
		t.Errorf("the worker did not report a clean stop:\n%s", p.out.String())
	}
	if scrape(metricsAddr) != "" {
		t.Error("the metrics listener outlived the process")
	}
}

// A worker that cannot have the Wds* search attributes would start nothing: it exits and says why.
func TestWorkerExitsWhenTheSearchAttributesCannotBeRegistered(t *testing.T) {
	srv, err := temporaldev.Start(context.Background(), temporaldev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	code, out := run(t, []string{"DATABASE_URL=" + pgtest.URL(t), "WDS_ENCRYPTION_KEY=" + secrets.GenerateKey(),
		"TEMPORAL_ADDRESS=" + srv.Address, "TEMPORAL_NAMESPACE=no-such-namespace", "WDS_METRICS_ADDR=127.0.0.1:0"}, "worker")
	if code != 1 || !strings.Contains(out, `search attributes are missing on Temporal namespace "no-such-namespace"`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// Temporal Cloud settings: an API key implies TLS, a client certificate makes it mutual, a CA
// bundle replaces the system roots; a broken file fails at start naming the variable.
func TestTemporalOptionsForTemporalCloud(t *testing.T) {
	dir := t.TempDir()
	ca, err := ensureDevCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, devCAKeyFile)
	t.Setenv("TEMPORAL_API_KEY", "tcld-key")
	t.Setenv("TEMPORAL_TLS_CERT", ca)
	t.Setenv("TEMPORAL_TLS_KEY", key)
	t.Setenv("TEMPORAL_TLS_CA", ca)
	t.Setenv("TEMPORAL_TLS_SERVER_NAME", "ns.tmprl.cloud")
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	o, err := temporalclient.ClientOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tc := o.ConnectionOptions.TLS
	if o.Credentials == nil || tc == nil || len(tc.Certificates) != 1 || tc.RootCAs == nil || tc.ServerName != "ns.tmprl.cloud" {
		t.Fatalf("options %+v, TLS %+v", o, tc)
	}
	t.Setenv("TEMPORAL_TLS_KEY", "")
	if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TEMPORAL_TLS_KEY") {
		t.Fatalf("a certificate without its key: %v", err)
	}
	t.Setenv("TEMPORAL_TLS_CERT", "")
	t.Setenv("TEMPORAL_TLS_CA", filepath.Join(dir, "missing.pem"))
	if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TEMPORAL_TLS_CA") {
		t.Fatalf("a missing CA file: %v", err)
	}
}
