package main

import (
	"context"
	"fmt"
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

func TestAdminEventListAndShow(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	t.Setenv("WDS_ENCRYPTION_KEY", secrets.GenerateKey())
	t.Setenv("WDS_WEBHOOK_ALLOW_PRIVATE", "true")
	org := mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	store := mustAdmin(t, "store", "create", "--org", org, "--name", "Shop")["id"].(string)
	owner := mustAdmin(t, "user", "create", "--org", org, "--email", "o@acme.example", "--role", "owner")["id"].(string)
	ep := mustAdmin(t, "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1:9443/hook", "--events", "order.created")["id"].(string)

	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	orgID, order := uuid.MustParse(org), uuid.New()
	db.Exec(`INSERT INTO orders (id, org_id, store_id, number, currency, subtotal_cents, total_cents, status)
		VALUES (?, ?, ?, 1042, 'EUR', 100, 100, 'invoiced')`, order, orgID, store)
	ev, _ := deliverytest.Emit(context.Background(), db, orgID, nil, events.OrderCreated, map[string]any{"id": order})
	deliverytest.Emit(context.Background(), db, orgID, nil, events.OrderCreated, map[string]any{"id": uuid.New()})
	db.Exec("UPDATE events SET dispatched_at = now()") // as the relay leaves them once started
	d := models.Delivery{ID: uuid.New(), OrgID: orgID, EventID: ev, EndpointID: uuid.MustParse(ep), EventType: "order.created",
		ChainID: uuid.New(), WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: "dropped", AttemptedAt: time.Now()}
	if err := db.Create(&d).Error; err != nil {
		t.Fatal(err)
	}

	for _, order := range []string{"1042", order.String()} {
		rows := mustAdmin(t, "event", "list", "--org", org, "--order", order)["rows"].([]any)
		if len(rows) != 1 || rows[0].(map[string]any)["id"] != ev.String() || rows[0].(map[string]any)["outcome"] != "dropped" {
			t.Fatalf("--order %s: %v", order, rows)
		}
	}
	if rows := mustAdmin(t, "event", "list", "--org", org, "--type", "order.created", "--outcome", "dropped", "--since", "2026-01-01T00:00:00Z")["rows"].([]any); len(rows) != 1 {
		t.Fatalf("filters: %v", rows)
	}
	if rows := mustAdmin(t, "event", "list", "--org", org)["rows"].([]any); len(rows) != 2 {
		t.Fatalf("all: %v", rows)
	}
	rows := mustAdmin(t, "event", "list", "--org", org, "--endpoint", ep)["rows"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["outcome"] != "dropped" ||
		fmt.Sprint(rows[0].(map[string]any)["endpoints"]) != fmt.Sprint([]any{map[string]any{"endpoint_id": ep, "outcome": "dropped"}}) {
		t.Fatalf("--endpoint: %v", rows)
	}
	show := mustAdmin(t, "event", "show", "--id", ev.String())
	chains := show["chains"].([]any)
	if show["payload"].(map[string]any)["id"] != ev.String() || len(chains) != 1 || chains[0].(map[string]any)["kind"] != "original" ||
		len(chains[0].(map[string]any)["attempts"].([]any)) != 1 {
		t.Fatalf("show %v", show)
	}
	member := mustAdmin(t, "user", "create", "--org", org, "--email", "m@acme.example", "--role", "member")["id"].(string)
	_, err = admin(t, "event", "resend", "--id", ev.String(), "--actor", member)
	wantCode(t, err, "forbidden")
	_, err = admin(t, "event", "resend", "--id", ev.String(), "--actor", owner, "--endpoint", "nope")
	wantCode(t, err, "invalid_parameter")
	re := mustAdmin(t, "event", "resend", "--id", ev.String(), "--actor", owner, "--endpoint", ep)["chains"].([]any)
	if len(re) != 1 || re[0].(map[string]any)["workflow_id"] != contract.ResendWorkflowID(ev, uuid.MustParse(ep), 1) {
		t.Fatalf("resend %v", re)
	}
	_, err = admin(t, "event", "resend", "--id", ev.String(), "--actor", owner)
	wantCode(t, err, "delivery_in_progress")
	_, err = admin(t, "event", "list", "--org", org, "--order", "A-1042")
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "event", "list", "--org", org, "--order", "9999")
	wantCode(t, err, "not_found")
	if !strings.Contains(err.Error(), "no order 9999") {
		t.Errorf("an unknown order number: %v", err)
	}
	_, err = admin(t, "event", "list", "--org", org, "--outcome", "lost")
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "event", "list", "--org", org, "--since", "yesterday")
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "event", "show", "--id", uuid.NewString())
	wantCode(t, err, "not_found")

	// An order's events, to one endpoint, named by the order's number.
	second := uuid.New()
	db.Exec(`INSERT INTO orders (id, org_id, store_id, number, currency, subtotal_cents, total_cents, status)
		VALUES (?, ?, ?, 1043, 'EUR', 100, 100, 'invoiced')`, second, orgID, store)
	ev2, _ := deliverytest.Emit(context.Background(), db, orgID, nil, events.OrderCreated, map[string]any{"id": second})
	db.Exec("UPDATE events SET dispatched_at = now() WHERE id = ?", ev2)
	_, err = admin(t, "event", "resend", "--order", "1043", "--actor", owner)
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "event", "resend", "--actor", owner, "--endpoint", ep)
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "event", "resend", "--order", "9999", "--endpoint", ep, "--actor", owner)
	wantCode(t, err, "not_found")
	re = mustAdmin(t, "event", "resend", "--order", "1043", "--endpoint", ep, "--actor", owner)["chains"].([]any)
	if len(re) != 1 || re[0].(map[string]any)["workflow_id"] != contract.ResendWorkflowID(ev2, uuid.MustParse(ep), 1) {
		t.Fatalf("resend order 1043 %v", re)
	}
}
