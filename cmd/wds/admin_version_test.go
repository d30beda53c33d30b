package main

import (
	"context"
	"fmt"
	"maps"
	"net"
	"testing"
	"time"

	"wds/internal/dev/temporaldev"
	"wds/test/versiontest"
)

// The deploy runbook's commands on a real dev server with two workers of different build ids: list
// shows each version's status and open chains, promote and ramp move new chains, rollback goes back,
// and mistakes are refused in the admin commands' error shape. No database is needed.
func TestAdminVersionCommands(t *testing.T) {
	srv, err := temporaldev.Start(context.Background(), temporaldev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	t.Setenv("TEMPORAL_ADDRESS", srv.Address)
	t.Setenv("DATABASE_URL", "")
	t.Setenv("WDS_DATA_DIR", t.TempDir())
	c := srv.Client()

	_, err = admin(t, "version", "list")
	wantCode(t, err, "not_found")
	versiontest.StartWorker(t, c, "old")
	versiontest.AwaitVersion(t, c, "old")
	if out := mustAdmin(t, "version", "promote", "--build-id", "old"); out["build_id"] != "old" || out["previous_build_id"] != "" {
		t.Fatalf("promote old: %v", out)
	}
	versiontest.StartChain(t, c)
	versiontest.StartWorker(t, c, "new")
	versiontest.AwaitVersion(t, c, "new")

	_, err = admin(t, "version", "promote", "--build-id", "newer")
	wantCode(t, err, "not_found")
	_, err = admin(t, "version", "promote")
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "version", "ramp", "--build-id", "new", "--percent", "150")
	wantCode(t, err, "invalid_parameter")
	if out := mustAdmin(t, "version", "ramp", "--build-id", "new", "--percent", "10%"); out["status"] != "ramping" || out["ramp_percent"] != 10.0 {
		t.Fatalf("ramp: %v", out)
	}
	if out := mustAdmin(t, "version", "promote", "--build-id", "new"); out["previous_build_id"] != "old" {
		t.Fatalf("promote new: %v", out)
	}
	awaitVersions(t, map[string]string{"new": "current 0", "old": "draining 1"})
	if out := mustAdmin(t, "version", "rollback"); out["build_id"] != "old" || out["previous_build_id"] != "new" {
		t.Fatalf("rollback: %v", out)
	}
	awaitVersions(t, map[string]string{"old": "current 1", "new": "draining 0"})
	// Back to the release before versioning, whose unversioned workers take new chains.
	if out := mustAdmin(t, "version", "promote", "--unversioned"); out["build_id"] != "" || out["previous_build_id"] != "old" {
		t.Fatalf("promote --unversioned: %v", out)
	}
}

// A Temporal that does not answer is temporal_unavailable, a retryable answer, not an internal error.
func TestAdminVersionWithoutTemporal(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEMPORAL_ADDRESS", l.Addr().String())
	l.Close() // nothing listens there any more
	t.Setenv("WDS_DATA_DIR", t.TempDir())
	_, err = admin(t, "version", "list")
	wantCode(t, err, "temporal_unavailable")
}

// awaitVersions waits until `wds admin version list` shows each build id's status and open
// workflows as want has them ("current 1"): visibility lags a little.
func awaitVersions(t *testing.T, want map[string]string) {
	t.Helper()
	var got map[string]string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		out := mustAdmin(t, "version", "list")
		got = map[string]string{}
		for _, v := range out["versions"].([]any) {
			v := v.(map[string]any)
			got[v["build_id"].(string)] = fmt.Sprintf("%s %v", v["status"], v["open_workflows"])
		}
		if maps.Equal(got, want) {
			return
		}
	}
	t.Fatalf("version list %v, want %v", got, want)
}
