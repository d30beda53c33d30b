package main

import (
	"strings"
	"testing"

	"wds/test/pgtest"
)

// wds admin vendor create, update and claim-token: events as the Operator API's, an unchanged edit
// emits nothing, a member may not issue a token.
func TestAdminVendorCommands(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	org, store, member, _ := appWorkspace(t)
	owner := mustAdmin(t, "user", "create", "--org", org, "--email", "o@acme.example", "--role", "owner")["id"].(string)
	_, err := admin(t, "vendor", "create", "--org", org, "--store", store, "--name", "Clay")
	wantCode(t, err, "invalid_parameter") // --actor is required: every write is audited
	v := mustAdmin(t, "vendor", "create", "--org", org, "--store", store, "--actor", member, "--name", "Clay", "--phone", "+1 555")
	id := v["id"].(string)
	if v["phone"] != "+1 555" || v["email"] != nil {
		t.Fatalf("create printed %v", v)
	}
	if u := mustAdmin(t, "vendor", "update", "--id", id, "--actor", member, "--phone", "", "--notes", "Net 30"); u["phone"] != nil || u["notes"] != "Net 30" {
		t.Fatalf("update printed %v", u)
	}
	mustAdmin(t, "vendor", "update", "--id", id, "--actor", member, "--notes", "Net 30")
	_, err = admin(t, "vendor", "update", "--id", id, "--actor", member, "--name", "")
	wantCode(t, err, "validation_failed")
	_, err = admin(t, "vendor", "claim-token", "--id", id, "--actor", member)
	wantCode(t, err, "forbidden")
	if tok := mustAdmin(t, "vendor", "claim-token", "--id", id, "--actor", owner); !strings.HasPrefix(tok["token"].(string), "vct_") || tok["expires_at"] == nil {
		t.Fatalf("claim-token printed %v", tok)
	}
	if got := strings.Join(eventTypesAt(t, url), ","); got != "vendor.created,vendor.updated" {
		t.Fatalf("events %s", got)
	}
}
