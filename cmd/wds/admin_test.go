package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"wds/internal/platform/answer"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// admin runs one admin command in-process and returns its JSON object as a map.
func admin(t *testing.T, args ...string) (map[string]any, error) {
	t.Helper()
	out, err := runAdmin(context.Background(), args)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(out)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

func mustAdmin(t *testing.T, args ...string) map[string]any {
	t.Helper()
	m, err := admin(t, args...)
	if err != nil {
		t.Fatalf("wds admin %v: %v", args, err)
	}
	return m
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %s, got success", code)
	}
	if got, _ := answer.Code(err); got != code {
		t.Fatalf("error code %s (%v), want %s", got, err, code)
	}
}

func TestAdminWorkspaceCommands(t *testing.T) {
	t.Setenv("DATABASE_URL", pgtest.URL(t))
	org := mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	store := mustAdmin(t, "store", "create", "--org", org, "--name", "Main", "--currency", "eur")["id"].(string)
	owner := mustAdmin(t, "user", "create", "--org", org, "--email", "o@acme.example", "--role", "owner")
	member := mustAdmin(t, "user", "create", "--org", org, "--email", "m@acme.example", "--role", "member")
	if tok, _ := owner["token"].(string); len(tok) < 40 {
		t.Fatalf("operator token %q", tok)
	}
	ownerID, memberID := owner["id"].(string), member["id"].(string)

	key := mustAdmin(t, "read-key", "create", "--org", org, "--actor", ownerID, "--scope", "read_write", "--name", "ci", "--expires-at", "2099-01-01T00:00:00Z")
	if k, _ := key["key"].(string); len(k) < 40 || k[:9] != "pck_live_" {
		t.Fatalf("read key %v", key)
	}
	_, err := admin(t, "read-key", "create", "--org", org, "--actor", memberID)
	wantCode(t, err, "forbidden")
	revoked := mustAdmin(t, "read-key", "revoke", "--id", key["id"].(string), "--actor", ownerID)
	if revoked["revoked_at"] == "" {
		t.Fatal("no revoked_at")
	}

	vendor := mustAdmin(t, "vendor", "create", "--org", org, "--store", store, "--actor", ownerID, "--name", "Supplier", "--email", "s@x.example")
	seller := mustAdmin(t, "seller", "create", "--name", "Maker")["id"].(string)
	mustAdmin(t, "seller", "link", "--org", org, "--store", store, "--seller", seller)
	product := mustAdmin(t, "product", "create", "--seller", seller, "--name", "Cup", "--price-cents", "1200", "--sku", "CUP", "--published")
	if vendor["id"] == "" || product["id"] == "" {
		t.Fatal("missing ids")
	}
}

func TestAdminAuditsKeyActionsWithoutSecrets(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	org := mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	owner := mustAdmin(t, "user", "create", "--org", org, "--email", "o@acme.example", "--role", "admin")["id"].(string)
	key := mustAdmin(t, "read-key", "create", "--org", org, "--actor", owner)
	mustAdmin(t, "read-key", "revoke", "--id", key["id"].(string), "--actor", owner)

	rows := auditRows(t, url)
	if len(rows) != 2 || rows[0].Action != "read_key.create" || rows[1].Action != "read_key.revoke" {
		t.Fatalf("audit rows: %+v", rows)
	}
	for _, r := range rows {
		if r.ActorID != owner || r.TargetID != key["id"] {
			t.Fatalf("audit row: %+v", r)
		}
		if containsSecret(r.Details, key["key"].(string)) {
			t.Fatal("audit row holds the plaintext key")
		}
	}
}

func TestAdminErrors(t *testing.T) {
	t.Setenv("DATABASE_URL", pgtest.URL(t))
	cases := []struct {
		args []string
		code string
	}{
		{[]string{"org"}, "invalid_parameter"},
		{[]string{"org", "explode"}, "invalid_parameter"},
		{[]string{"org", "create"}, "invalid_parameter"},
		{[]string{"org", "create", "--name", "x", "extra"}, "invalid_parameter"},
		{[]string{"org", "create", "--nope"}, "invalid_parameter"},
		{[]string{"store", "create", "--org", "not-a-uuid", "--name", "x"}, "invalid_parameter"},
		{[]string{"store", "create", "--org", "00000000-0000-0000-0000-000000000001", "--name", "x"}, "not_found"},
		{[]string{"user", "create", "--org", "00000000-0000-0000-0000-000000000001", "--email", "a@b.c", "--role", "god"}, "validation_failed"},
		{[]string{"read-key", "create", "--org", "00000000-0000-0000-0000-000000000001", "--actor", "00000000-0000-0000-0000-000000000002"}, "not_found"},
		{[]string{"read-key", "create", "--org", "00000000-0000-0000-0000-000000000001", "--actor", "00000000-0000-0000-0000-000000000002", "--expires-at", "soon"}, "invalid_parameter"},
		{[]string{"product", "create", "--seller", "00000000-0000-0000-0000-000000000001", "--name", "x"}, "invalid_parameter"},
	}
	for _, c := range cases {
		_, err := admin(t, c.args...)
		wantCode(t, err, c.code)
	}
	t.Setenv("DATABASE_URL", "")
	t.Setenv("WDS_DATA_DIR", t.TempDir())
	_, err := admin(t, "org", "create", "--name", "x")
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatal("no database must be an error")
	}
}
