package main

import (
	"strings"
	"testing"

	"wds/internal/platform/secrets"
	"wds/test/pgtest"
)

func TestAdminIntegrationKeyCommands(t *testing.T) {
	t.Setenv("DATABASE_URL", pgtest.URL(t))
	t.Setenv("WDS_ENCRYPTION_KEY", secrets.GenerateKey())
	org := mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	store := mustAdmin(t, "store", "create", "--org", org, "--name", "Main")["id"].(string)
	owner := mustAdmin(t, "user", "create", "--org", org, "--email", "o@acme.example", "--role", "owner")["id"].(string)
	member := mustAdmin(t, "user", "create", "--org", org, "--email", "m@acme.example", "--role", "member")["id"].(string)

	plain := mustAdmin(t, "integration-key", "create", "--org", org, "--store", store, "--actor", owner,
		"--scopes", "orders:write, payments:write", "--ip-allowlist", "203.0.113.0/24,2001:db8::/32",
		"--rate-limit", "1200", "--label", "Shopify", "--expires-at", "2099-01-01T00:00:00Z")
	if !strings.HasPrefix(plain["key"].(string), "pck_int_") || plain["signing_secret"] != nil {
		t.Fatalf("create %v", plain)
	}
	signed := mustAdmin(t, "integration-key", "create", "--org", org, "--store", store, "--actor", owner,
		"--scopes", "orders:write", "--require-signature")
	native := mustAdmin(t, "integration-key", "create", "--org", org, "--store", store, "--actor", owner,
		"--scopes", "orders:write", "--format", "nativestore")
	for _, k := range []map[string]any{signed, native} {
		if s, _ := k["signing_secret"].(string); !strings.HasPrefix(s, "whsec_") {
			t.Fatalf("signing secret missing: %v", k)
		}
	}

	_, err := admin(t, "integration-key", "create", "--org", org, "--store", store, "--actor", member, "--scopes", "orders:write")
	wantCode(t, err, "forbidden")
	_, err = admin(t, "integration-key", "create", "--org", org, "--store", store, "--actor", owner, "--scopes", "orders:delete")
	wantCode(t, err, "validation_failed")
	_, err = admin(t, "integration-key", "create", "--org", org, "--store", store, "--actor", owner)
	wantCode(t, err, "invalid_parameter") // --scopes is a required flag, as -h says
	_, err = admin(t, "integration-key", "create", "--org", org, "--store", store, "--actor", owner, "--scopes", ",")
	wantCode(t, err, "validation_failed") // the same rule as the Operator API's: at least one scope
	_, err = admin(t, "integration-key", "create", "--org", org, "--store", store, "--actor", owner, "--scopes", "orders:write", "--rate-limit", "6001")
	wantCode(t, err, "validation_failed")

	rev := mustAdmin(t, "integration-key", "revoke", "--id", plain["id"].(string), "--actor", owner)
	if rev["id"] != plain["id"] || rev["revoked_at"] == "" {
		t.Fatalf("revoke %v", rev)
	}
	_, err = admin(t, "integration-key", "revoke", "--id", signed["id"].(string), "--actor", member)
	wantCode(t, err, "forbidden")
}
