package main

import (
	"context"
	"strings"
	"testing"

	"wds/internal/platform/secrets"
	"wds/test/pgtest"
)

// `wds serve` and `wds worker` refuse to start when their WDS_ENCRYPTION_KEY opens none of the stored
// signing secrets, naming the variables to check; with the old key as WDS_ENCRYPTION_KEY_PREVIOUS
// (a rotation) they start.
func TestAServiceWhoseKeyOpensNoSecretRefusesToStart(t *testing.T) {
	t.Setenv("DATABASE_URL", pgtest.URL(t))
	t.Setenv("WDS_METRICS_ADDR", "127.0.0.1:0")
	t.Setenv("WDS_WEBHOOK_ALLOW_PRIVATE", "true")
	sealedWith := secrets.GenerateKey()
	t.Setenv("WDS_ENCRYPTION_KEY", sealedWith)
	org := mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	owner := mustAdmin(t, "user", "create", "--org", org, "--email", "o@acme.example", "--role", "owner")["id"].(string)
	mustAdmin(t, "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1:9443/hook", "--events", "order.created")

	start := func() error {
		_, closeAll, err := startService(context.Background(), "wds-worker")
		if err == nil {
			closeAll()
		}
		return err
	}
	if err := start(); err != nil {
		t.Fatalf("with the key that sealed the secrets: %v", err)
	}
	t.Setenv("WDS_ENCRYPTION_KEY", secrets.GenerateKey())
	err := start()
	if err == nil || !strings.Contains(err.Error(), "WDS_ENCRYPTION_KEY") || !strings.Contains(err.Error(), "WDS_ENCRYPTION_KEY_PREVIOUS") {
		t.Fatalf("with another key: %v, want a refusal naming WDS_ENCRYPTION_KEY and WDS_ENCRYPTION_KEY_PREVIOUS", err)
	}
	t.Setenv("WDS_ENCRYPTION_KEY_PREVIOUS", sealedWith)
	if err := start(); err != nil {
		t.Fatalf("with the old key as WDS_ENCRYPTION_KEY_PREVIOUS: %v", err)
	}
}
