package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/platform/database"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

func TestAdminSecretsReencryptCompletesARotation(t *testing.T) {
	url := pgtest.URL(t)
	oldKey, newKey := secrets.GenerateKey(), secrets.GenerateKey()
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	ctx := context.Background()
	org, _ := workspace.NewService(db).CreateOrg(ctx, "Rotating")
	owner, _, _ := workspace.NewService(db).CreateUser(ctx, org.ID, "o@rotating.test", models.RoleOwner)
	oldBox, _ := secrets.NewBox(oldKey)
	ep, err := endpoints.NewService(db, oldBox, endpoints.Options{AllowPrivate: true}).Create(ctx,
		endpoints.CreateInput{OrgID: org.ID, ActorID: owner.ID, URL: "https://127.0.0.1/hook", EventTypes: []string{"order.created"}})
	if err != nil {
		t.Fatal(err)
	}

	// An endpoint of before header values were sealed: its values in plaintext, nothing sealed.
	legacy, err := endpoints.NewService(db, oldBox, endpoints.Options{AllowPrivate: true}).Create(ctx,
		endpoints.CreateInput{OrgID: org.ID, ActorID: owner.ID, URL: "https://127.0.0.1/legacy", EventTypes: []string{"order.created"}})
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`UPDATE webhook_endpoints SET headers = '{"Authorization": "Bearer legacy"}', headers_sealed = NULL WHERE id = ?`, legacy.ID)

	t.Setenv("DATABASE_URL", url)
	t.Setenv("WDS_ENCRYPTION_KEY", newKey)
	t.Setenv("WDS_ENCRYPTION_KEY_PREVIOUS", "not-a-key")
	_, err = admin(t, "secrets", "reencrypt")
	if err == nil || !strings.Contains(err.Error(), "WDS_ENCRYPTION_KEY_PREVIOUS") || strings.Contains(err.Error(), newKey) {
		t.Fatalf("a bad previous key: %v", err)
	}

	t.Setenv("WDS_ENCRYPTION_KEY_PREVIOUS", oldKey)
	out := mustAdmin(t, "secrets", "reencrypt")
	cols := out["columns"].([]any)
	if first := cols[0].(map[string]any); first["table"] != "webhook_endpoints" || first["resealed"] != float64(2) {
		t.Fatalf("reencrypt printed %v", out)
	}
	if last := cols[len(cols)-1].(map[string]any); last["column"] != "headers" || last["sealed"] != float64(1) {
		t.Fatalf("reencrypt did not report the legacy headers it sealed: %v", out)
	}
	var names string
	if err := db.Raw("SELECT headers::text FROM webhook_endpoints WHERE id = ? AND headers_sealed IS NOT NULL", legacy.ID).Row().Scan(&names); err != nil || strings.Contains(names, "legacy") {
		t.Fatalf("the legacy headers are not sealed: %q %v", names, err)
	}
	var sealed []byte
	if err := db.Raw("SELECT secret_sealed FROM webhook_endpoints WHERE id = ?", ep.ID).Row().Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	newBox, _ := secrets.NewBox(newKey)
	if got, err := newBox.Open(sealed); err != nil || string(got) != ep.Secret {
		t.Fatalf("after reencrypt the new key alone does not open the secret: %v", err)
	}
}

// An attempt stored by a release before redaction keeps the receiver's echo of a header value and
// the signing secret; `wds admin secrets redact` replaces them as the attempt would now, leaves other
// answers as they were, skips an endpoint no key opens, and finds nothing more on a second run.
func TestAdminSecretsRedactRedactsAnswersStoredBefore(t *testing.T) {
	url := pgtest.URL(t)
	key := secrets.GenerateKey()
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	ctx := context.Background()
	org, _ := workspace.NewService(db).CreateOrg(ctx, "Echoing")
	owner, _, _ := workspace.NewService(db).CreateUser(ctx, org.ID, "o@echoing.test", models.RoleOwner)
	box, _ := secrets.NewBox(key)
	ep, err := endpoints.NewService(db, box, endpoints.Options{AllowPrivate: true}).Create(ctx,
		endpoints.CreateInput{OrgID: org.ID, ActorID: owner.ID, URL: "https://127.0.0.1/hook", EventTypes: []string{"order.created"},
			Headers: map[string]string{"Authorization": "Bearer echoed-token-42"}})
	if err != nil {
		t.Fatal(err)
	}
	// An endpoint sealed under a key the command is not given is counted and skipped, not a stop.
	otherBox, _ := secrets.NewBox(secrets.GenerateKey())
	if _, err := endpoints.NewService(db, otherBox, endpoints.Options{AllowPrivate: true}).Create(ctx,
		endpoints.CreateInput{OrgID: org.ID, ActorID: owner.ID, URL: "https://127.0.0.1/other", EventTypes: []string{"order.created"}}); err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{
		"echo":  `{"received_headers":{"Authorization":"Bearer echoed-token-42"},"secret":"` + ep.Secret + `"}`,
		"plain": "bad gateway",
	}
	ids := map[string]uuid.UUID{}
	for name, text := range answers {
		ev, id := uuid.New(), uuid.New()
		ids[name] = id
		if err := db.Exec(`INSERT INTO events (id, org_id, type, body) VALUES (?, ?, 'order.created', '{}')`, ev, org.ID).Error; err != nil {
			t.Fatal(err)
		}
		err := db.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id,
			attempt, status, response_status, response_excerpt, attempted_at)
			VALUES (?, ?, ?, ?, 'order.created', ?, 'w', 1, 'failed', 502, ?, now())`, id, org.ID, ev, ep.ID, uuid.New(), text).Error
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Setenv("DATABASE_URL", url)
	t.Setenv("WDS_ENCRYPTION_KEY", key)
	out := mustAdmin(t, "secrets", "redact")
	if out["answers_read"] != float64(2) || out["answers_redacted"] != float64(1) || out["endpoints"] != float64(2) ||
		out["endpoints_unreadable"] != float64(1) {
		t.Fatalf("redact printed %v", out)
	}
	read := func(name string) string {
		var text string
		if err := db.Raw("SELECT response_excerpt FROM webhook_deliveries WHERE id = ?", ids[name]).Row().Scan(&text); err != nil {
			t.Fatal(err)
		}
		return text
	}
	if got, want := read("echo"), `{"received_headers":{"Authorization":"[redacted]"},"secret":"[redacted]"}`; got != want {
		t.Fatalf("the echo reads %s, want %s", got, want)
	}
	if got := read("plain"); got != answers["plain"] {
		t.Fatalf("an answer with nothing sealed changed: %q", got)
	}
	if again := mustAdmin(t, "secrets", "redact"); again["answers_redacted"] != float64(0) {
		t.Fatalf("a second run redacted again: %v", again)
	}
}
