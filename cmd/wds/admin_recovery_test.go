package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/platform/database"
	"wds/internal/platform/secrets"
	"wds/models"
	"wds/test/deliverytest"
	"wds/test/pgtest"
	"wds/workflows/contract"
)

func TestAdminRecoverWaitsShowsAndCancels(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	t.Setenv("WDS_ENCRYPTION_KEY", secrets.GenerateKey())
	t.Setenv("WDS_WEBHOOK_ALLOW_PRIVATE", "true")
	org := mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	owner := mustAdmin(t, "user", "create", "--org", org, "--email", "o@acme.example", "--role", "owner")["id"].(string)
	member := mustAdmin(t, "user", "create", "--org", org, "--email", "m@acme.example", "--role", "member")["id"].(string)
	ep := mustAdmin(t, "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1:9443/hook", "--events", "order.created")["id"].(string)
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	for range 3 {
		ev, _ := deliverytest.Emit(context.Background(), db, uuid.MustParse(org), nil, events.OrderCreated, map[string]any{"id": uuid.New()})
		db.Create(&models.Delivery{ID: uuid.New(), OrgID: uuid.MustParse(org), EventID: ev, EndpointID: uuid.MustParse(ep), EventType: "order.created",
			ChainID: uuid.New(), WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: "dropped", AttemptedAt: time.Now()})
	}
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)

	_, err = admin(t, "endpoint", "recover", "--id", ep, "--actor", member, "--since", since)
	wantCode(t, err, "forbidden")
	_, err = admin(t, "endpoint", "recover", "--id", ep, "--actor", owner, "--since", "yesterday")
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "endpoint", "recover", "--id", ep, "--actor", owner, "--since", time.Now().Add(time.Hour).Format(time.RFC3339))
	wantCode(t, err, "invalid_parameter")

	// --wait reports progress on stderr until the recovery ends (here: cancelled from another shell).
	progress := &syncBuf{}
	progressOut = progress
	defer func() { progressOut = os.Stderr }()
	done := make(chan map[string]any)
	go func() {
		done <- mustAdmin(t, "endpoint", "recover", "--id", ep, "--actor", owner, "--since", since, "--wait")
	}()
	var id string
	deadline := time.Now().Add(10 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		db.Raw("SELECT id::text FROM webhook_recoveries WHERE endpoint_id = ?", ep).Scan(&id)
		time.Sleep(20 * time.Millisecond)
	}
	if show := mustAdmin(t, "recovery", "show", "--id", id); show["status"] != "running" || show["total"] != 3.0 {
		t.Fatalf("show %v", show)
	}
	_, err = admin(t, "endpoint", "recover", "--id", ep, "--actor", owner, "--since", since)
	wantCode(t, err, "recovery_in_progress")
	_, err = admin(t, "recovery", "cancel", "--id", id, "--actor", member)
	wantCode(t, err, "forbidden")
	// --wait's first report, before the cancel it should also report.
	deadline = time.Now().Add(10 * time.Second)
	for !strings.Contains(progress.String(), "0 of 3 chains started, running") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if c := mustAdmin(t, "recovery", "cancel", "--id", id, "--actor", owner); c["status"] != "cancelled" {
		t.Fatalf("cancel %v", c)
	}
	select {
	case out := <-done:
		if out["id"] != id || out["status"] != "cancelled" {
			t.Fatalf("--wait printed %v", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("--wait did not end with the recovery")
	}
	if got := progress.String(); !strings.Contains(got, "0 of 3 chains started, running") || !strings.Contains(got, "0 of 3 chains started, cancelled") {
		t.Fatalf("progress on stderr:\n%s", got)
	}
	_, err = admin(t, "recovery", "show", "--id", uuid.NewString())
	wantCode(t, err, "not_found")

	// show says how the chains it started stand: here one, delivered.
	var ev, drop uuid.UUID
	db.Raw("SELECT event_id, id FROM webhook_deliveries WHERE endpoint_id = ? LIMIT 1", ep).Row().Scan(&ev, &drop)
	chain, workflow := uuid.New(), "webhook-recovery/"+ev.String()+"/"+ep+"/1"
	db.Exec(`INSERT INTO webhook_dispatches (id, org_id, kind, workflow_id, event_id, endpoint_id, chain_id, refired_delivery_id, recovery_id, dispatched_at)
		VALUES (?, ?, 'recovery', ?, ?, ?, ?, ?, ?, now())`, uuid.New(), org, workflow, ev, ep, chain, drop, id)
	db.Create(&models.Delivery{ID: uuid.New(), OrgID: uuid.MustParse(org), EventID: ev, EndpointID: uuid.MustParse(ep), EventType: "order.created",
		ChainID: chain, WorkflowID: workflow, Attempt: 1, Status: "succeeded", AttemptedAt: time.Now()})
	if show := mustAdmin(t, "recovery", "show", "--id", id); show["succeeded"] != 1.0 || show["retrying"] != 0.0 || show["dropped"] != 0.0 {
		t.Fatalf("show %v", show)
	}

	// A window with nothing in it: completed in its answer, and said so on stderr.
	progress = &syncBuf{}
	progressOut = progress
	empty := time.Now().Add(-3 * time.Hour).UTC()
	out := mustAdmin(t, "endpoint", "recover", "--id", ep, "--actor", owner, "--since", empty.Format(time.RFC3339),
		"--until", empty.Add(time.Hour).Format(time.RFC3339), "--wait")
	if out["status"] != "completed" || out["total"] != 0.0 || out["skipped"] != 0.0 {
		t.Fatalf("an empty recovery %v", out)
	}
	if got := progress.String(); !strings.Contains(got, "nothing to recover since "+empty.Format(time.RFC3339)) {
		t.Fatalf("stderr of an empty recovery:\n%s", got)
	}
}
