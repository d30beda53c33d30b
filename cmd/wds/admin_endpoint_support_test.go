package main

import (
	"strings"
	"testing"

	"wds/internal/platform/secrets"
	"wds/test/pgtest"
)

func TestAdminEndpointRateLimitHeadersAndUpdate(t *testing.T) {
	t.Setenv("DATABASE_URL", pgtest.URL(t))
	t.Setenv("WDS_ENCRYPTION_KEY", secrets.GenerateKey())
	t.Setenv("WDS_WEBHOOK_ALLOW_PRIVATE", "true")
	org := mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	owner := mustAdmin(t, "user", "create", "--org", org, "--email", "o@acme.example", "--role", "owner")["id"].(string)
	member := mustAdmin(t, "user", "create", "--org", org, "--email", "m@acme.example", "--role", "member")["id"].(string)
	id := mustAdmin(t, "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1:9443/hook",
		"--events", "order.created", "--rate-limit", "20", "--header", "Authorization: Bearer tok", "--description", "Acme's order sync")["id"].(string)
	// The list shows each header's name with its value blank: values are credentials (docs/security.md).
	row := mustAdmin(t, "endpoint", "list", "--org", org)["rows"].([]any)[0].(map[string]any)
	if row["description"] != "Acme's order sync" || row["rate_limit"] != 20.0 || row["headers"].(map[string]any)["Authorization"] != "" || len(row["headers"].(map[string]any)) != 1 ||
		row["health"].(map[string]any)["unrecovered_dropped"] != 0.0 || row["health"].(map[string]any)["oldest_unrecovered_at"] != nil {
		t.Fatalf("list %v", row)
	}

	up := mustAdmin(t, "endpoint", "update", "--id", id, "--actor", owner, "--rate-limit", "none",
		"--header", "X-Tenant: acme", "--header", "X-Region: eu", "--max-attempts", "3", "--events", "order.created,payment.recorded")
	h := up["headers"].(map[string]any)
	if up["rate_limit"] != nil || len(h) != 2 || h["X-Tenant"] != "acme" || h["X-Region"] != "eu" || up["max_attempts"] != 3.0 ||
		len(up["event_types"].([]any)) != 2 {
		t.Fatalf("update %v", up)
	}
	up = mustAdmin(t, "endpoint", "update", "--id", id, "--actor", owner, "--clear-headers", "--rate-limit", "5", "--description", "")
	if up["description"] != nil || len(up["headers"].(map[string]any)) != 0 || up["rate_limit"] != 5.0 || up["max_attempts"] != 3.0 {
		t.Fatalf("update %v", up)
	}

	_, err := admin(t, "endpoint", "update", "--id", id, "--actor", owner, "--header", "X-PC-Signature: forged")
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "endpoint", "update", "--id", id, "--actor", owner, "--rate-limit", "1001")
	wantCode(t, err, "validation_failed")
	_, err = admin(t, "endpoint", "update", "--id", id, "--actor", owner, "--rate-limit", "fast")
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "endpoint", "update", "--id", id, "--actor", member, "--rate-limit", "9")
	wantCode(t, err, "forbidden")
	_, err = admin(t, "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1/2", "--events", "order.created", "--header", "Host: x")
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1/2", "--events", "order.created", "--header", "no colon")
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "endpoint", "update", "--id", id, "--actor", owner, "--header", "X-Token: a\x7fb")
	wantCode(t, err, "invalid_parameter")
	if !strings.Contains(err.Error(), "X-Token") {
		t.Fatalf("the error does not name the header: %v", err)
	}
	_, err = admin(t, "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1/2", "--events", "order.created", "--header", "X-Token: a\x01b")
	wantCode(t, err, "invalid_parameter")
	if rows := mustAdmin(t, "endpoint", "list", "--org", org)["rows"].([]any); len(rows) != 1 || rows[0].(map[string]any)["rate_limit"] != 5.0 {
		t.Fatalf("refusals changed the endpoints: %v", rows)
	}
}
