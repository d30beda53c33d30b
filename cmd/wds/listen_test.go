package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/uuid"

	"wds/internal/dev/temporaldev"
	"wds/internal/platform/database"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/deliverytest"
	"wds/test/pgtest"
)

// wds listen on the real stack: wds dev (its worker trusting its local CA, local receivers allowed by
// default), a real Temporal dev server, and a local app behind --forward-to. A delivery arrives,
// verified, is forwarded with its headers, and the app's answer is what the delivery log records;
// Ctrl-C deletes the endpoint.
func TestListenReceivesForwardsAndCleansUp(t *testing.T) {
	temporal, err := temporaldev.Start(context.Background(), temporaldev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = temporal.Stop() })
	url, dir := pgtest.URL(t), t.TempDir()
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	org, _ := workspace.NewService(db).CreateOrg(context.Background(), "Acme")
	owner, _, _ := workspace.NewService(db).CreateUser(context.Background(), org.ID, "owner@acme.test", models.RoleOwner)

	var mu sync.Mutex
	var got []http.Header
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer app.Close()

	env := []string{"DATABASE_URL=" + url, "WDS_DATA_DIR=" + dir, "WDS_ENCRYPTION_KEY=" + secrets.GenerateKey(),
		"TEMPORAL_ADDRESS=" + temporal.Address, "WDS_METRICS_ADDR=127.0.0.1:0"}
	addr := freeAddr(t)
	dev := startWDS(t, append(env, "WDS_HTTP_ADDR="+addr), "dev")
	dev.waitReady(t, addr)
	if !strings.Contains(dev.out.String(), localReceiversNote) {
		t.Errorf("wds dev does not say it allows local receivers:\n%s", dev.out.String())
	}
	l := startWDS(t, env, "listen", "--org", org.ID.String(), "--actor", owner.ID.String(),
		"--events", "client.created", "--forward-to", app.URL+"/hooks")
	waitFor(t, "wds listen to be ready", func() bool { return strings.Contains(l.out.String(), "Ready: endpoint ") })
	var ep models.Endpoint
	db.Where("org_id = ? AND deleted_at IS NULL", org.ID).Take(&ep)
	if ep.Description == nil || !strings.HasPrefix(*ep.Description, "Temporary: wds listen on ") || !strings.Contains(*ep.Description, "forwards to "+app.URL) {
		t.Errorf("the listen endpoint's description %v does not say it is temporary", ep.Description)
	}

	ev, err := deliverytest.Emit(context.Background(), db, org.ID, nil, "client.created", map[string]any{"id": uuid.New()})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery forwarded to the app", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 1 })
	if h := got[0]; h.Get("X-PC-Event-Id") != ev.String() || !strings.HasPrefix(h.Get("X-PC-Signature"), "t=") {
		t.Errorf("forwarded headers %v", h)
	}
	waitFor(t, "the delivery logged", func() bool {
		var d models.Delivery
		return db.Where("event_id = ? AND endpoint_id = ?", ev, ep.ID).Take(&d).Error == nil && d.ResponseStatus != nil
	})
	var d models.Delivery
	db.Where("event_id = ?", ev).Take(&d)
	if d.Status != models.StatusSucceeded || *d.ResponseStatus != http.StatusAccepted {
		t.Errorf("delivery %s with %d, want succeeded with the app's 202", d.Status, *d.ResponseStatus)
	}
	out := l.out.String()
	for _, want := range []string{"client.created", "event " + ev.String(), "verified", "answered 202"} {
		if !strings.Contains(out, want) {
			t.Errorf("wds listen printed no %q:\n%s", want, out)
		}
	}

	if err := l.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-l.exited
	db.Where("id = ?", ep.ID).Take(&ep)
	if l.err != nil || ep.DeletedAt == nil || ep.Enabled {
		t.Fatalf("after Ctrl-C: exit %v, endpoint enabled %v deleted %v\n%s", l.err, ep.Enabled, ep.DeletedAt, l.out.String())
	}
}
