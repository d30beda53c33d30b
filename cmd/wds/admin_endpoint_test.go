package main

import (
	"context"
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

func TestAdminEndpointAndRefireCommands(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	t.Setenv("WDS_ENCRYPTION_KEY", secrets.GenerateKey())
	t.Setenv("WDS_WEBHOOK_ALLOW_PRIVATE", "true")
	org := mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	owner := mustAdmin(t, "user", "create", "--org", org, "--email", "o@acme.example", "--role", "owner")["id"].(string)
	member := mustAdmin(t, "user", "create", "--org", org, "--email", "m@acme.example", "--role", "member")["id"].(string)

	ep := mustAdmin(t, "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1:9443/hook", "--events", "order.created,payment.recorded", "--max-attempts", "3")
	if len(ep) != 2 || ep["id"] == "" || ep["secret"].(string)[:6] != "whsec_" {
		t.Fatalf("create printed %v, want exactly {id, secret}", ep)
	}
	id := ep["id"].(string)
	_, err := admin(t, "endpoint", "create", "--org", org, "--actor", owner, "--url", "http://127.0.0.1/hook", "--events", "order.created")
	wantCode(t, err, "https_required")
	_, err = admin(t, "endpoint", "create", "--org", org, "--actor", member, "--url", "https://127.0.0.1/hook", "--events", "order.created")
	wantCode(t, err, "forbidden")
	_, err = admin(t, "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1/hook", "--events", "order.created", "--max-attempts", "11")
	wantCode(t, err, "validation_failed")

	list := mustAdmin(t, "endpoint", "list", "--org", org)["rows"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["max_attempts"] != 3.0 {
		t.Fatalf("list %v", list)
	}
	if got := mustAdmin(t, "endpoint", "disable", "--id", id, "--actor", owner); got["enabled"] != false {
		t.Fatalf("disable %v", got)
	}
	if got := mustAdmin(t, "endpoint", "enable", "--id", id, "--actor", owner); got["enabled"] != true {
		t.Fatalf("enable %v", got)
	}
	if got := mustAdmin(t, "endpoint", "rotate-secret", "--id", id, "--actor", owner); got["secret"] == ep["secret"] {
		t.Fatalf("rotate %v", got)
	}

	// A dropped delivery, as the engine would have logged it.
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	ev, _ := deliverytest.Emit(context.Background(), db, uuid.MustParse(org), nil, events.OrderCreated, nil)
	d := models.Delivery{ID: uuid.New(), OrgID: uuid.MustParse(org), EventID: ev, EndpointID: uuid.MustParse(id), EventType: "order.created",
		ChainID: uuid.New(), WorkflowID: contract.EventWorkflowID(ev), Attempt: 3, Status: "dropped", AttemptedAt: time.Now()}
	if err := db.Create(&d).Error; err != nil {
		t.Fatal(err)
	}
	page := mustAdmin(t, "endpoint", "deliveries", "--id", id, "--limit", "10")
	if rows := page["rows"].([]any); len(rows) != 1 || page["next_cursor"] != nil {
		t.Fatalf("deliveries %v", page)
	}
	_, err = admin(t, "endpoint", "deliveries", "--id", id, "--cursor-at", "2026-01-01T00:00:00Z")
	wantCode(t, err, "invalid_cursor")

	_, err = admin(t, "delivery", "refire", "--id", d.ID.String(), "--actor", member)
	wantCode(t, err, "forbidden")
	re := mustAdmin(t, "delivery", "refire", "--id", d.ID.String(), "--actor", owner)
	if len(re) != 2 || re["workflow_id"] != contract.RefireWorkflowID(ev, uuid.MustParse(id), 1) || re["chain_id"] == "" {
		t.Fatalf("refire printed %v", re)
	}
	mustAdmin(t, "endpoint", "delete", "--id", id, "--actor", owner)
	if rows := mustAdmin(t, "endpoint", "list", "--org", org)["rows"].([]any); len(rows) != 0 {
		t.Fatalf("deleted endpoint listed: %v", rows)
	}
	_, err = admin(t, "endpoint", "disable", "--id", id, "--actor", owner)
	wantCode(t, err, "not_found")
}
