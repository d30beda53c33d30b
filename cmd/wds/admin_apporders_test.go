package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wds/internal/events"
	"wds/internal/events/eventstest"
	"wds/internal/platform/database"
	"wds/test/pgtest"
)

// appWorkspace makes an org with a store and a member, and another org with a store.
func appWorkspace(t *testing.T) (org, store, member, otherStore string) {
	t.Helper()
	org = mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	store = mustAdmin(t, "store", "create", "--org", org, "--name", "Shop", "--currency", "EUR")["id"].(string)
	member = mustAdmin(t, "user", "create", "--org", org, "--email", "m@acme.example", "--role", "member")["id"].(string)
	other := mustAdmin(t, "org", "create", "--name", "Other")["id"].(string)
	otherStore = mustAdmin(t, "store", "create", "--org", other, "--name", "Far")["id"].(string)
	return org, store, member, otherStore
}

// eventTypesAt lists the events written to the database at url, oldest first, each body validated
// against the catalog's schema of its type.
func eventTypesAt(t *testing.T, url string) []string {
	t.Helper()
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	return eventstest.Written(t, db)
}

func TestAdminOrderCreateFromAFileAndStdin(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	org, store, member, otherStore := appWorkspace(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "order.json")
	body := `{"external_id": "POS-9", "lines": [{"description": "Mug", "quantity": 2, "unit_price_cents": 900}],
		"client": {"email": "cli@example.com"}, "payment": {"amount_cents": 1800, "method": "card"}}`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"order", "create", "--org", org, "--store", store, "--actor", member, "--file", file}
	res := mustAdmin(t, args...)
	if res["status"] != "paid" || res["total_cents"] != float64(1800) || res["duplicate"] != false || res["number"] != "1001" {
		t.Fatalf("envelope %v", res)
	}
	if dup := mustAdmin(t, args...); dup["duplicate"] != true || dup["id"] != res["id"] {
		t.Fatalf("repeat %v", dup)
	}

	stdin := filepath.Join(dir, "stdin.json")
	if err := os.WriteFile(stdin, []byte(`{"lines": [{"quantity": 1, "unit_price_cents": 5}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(stdin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	res = mustAdmin(t, "order", "create", "--org", org, "--store", store, "--actor", member, "--file", "-")
	os.Stdin = saved
	if res["status"] != "invoiced" || res["external_id"] != "" {
		t.Fatalf("from stdin %v", res)
	}
	want := []string{events.ClientCreated, events.OrderCreated, events.PaymentRecorded, events.OrderCreated}
	if got := eventTypesAt(t, url); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}

	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"metadata": "`+strings.Repeat("x", 1<<20)+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	outsider := mustAdmin(t, "user", "create", "--org", mustAdmin(t, "org", "create", "--name", "X")["id"].(string),
		"--email", "x@x.example", "--role", "owner")["id"].(string)
	cases := []struct {
		args []string
		code string
	}{
		{[]string{"order", "create", "--org", org, "--store", store, "--actor", member}, "invalid_parameter"},
		{[]string{"order", "create", "--org", org, "--store", store, "--actor", member, "--file", filepath.Join(dir, "missing.json")}, "invalid_parameter"},
		{[]string{"order", "create", "--org", org, "--actor", member, "--file", file}, "invalid_parameter"},
		{[]string{"order", "create", "--org", org, "--store", store, "--actor", member, "--file", big}, "payload_too_large"},
		{[]string{"order", "create", "--org", org, "--store", store, "--actor", member, "--file", write("a.json", `[1]`)}, "invalid_json"},
		{[]string{"order", "create", "--org", org, "--store", store, "--actor", member, "--file", write("b.json", `{"lines": [{"quantity": "1"}]}`)}, "validation_failed"},
		{[]string{"order", "create", "--org", org, "--store", store, "--actor", member, "--file", write("c.json", `{"lines": []}`)}, "lines_required"},
		{[]string{"order", "create", "--org", org, "--store", store, "--actor", outsider, "--file", file}, "not_found"},
		{[]string{"order", "create", "--org", org, "--store", otherStore, "--actor", member, "--file", file}, "not_found"},
	}
	for _, c := range cases {
		_, err := admin(t, c.args...)
		wantCode(t, err, c.code)
	}
	if got := eventTypesAt(t, url); len(got) != len(want) {
		t.Fatalf("refusals emitted events: %v", got)
	}
}

func TestAdminClientCreateAndUpdate(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	org, store, member, otherStore := appWorkspace(t)
	c := mustAdmin(t, "client", "create", "--org", org, "--store", store, "--actor", member, "--email", "ivy@example.com",
		"--first-name", "Ivy", "--last-name", "Ng", "--phone", "+61 2", "--client-type", "wholesale", "--tags", "vip, b2b")
	if c["display_name"] != "Ivy Ng" || c["client_type"] != "wholesale" || fmt.Sprint(c["tags"]) != "[vip b2b]" || c["source"] != nil {
		t.Fatalf("created %v", c)
	}
	id := c["id"].(string)
	same := mustAdmin(t, "client", "update", "--id", id, "--actor", member, "--first-name", "Ivy")
	if same["updated_at"] != c["updated_at"] {
		t.Fatalf("a no-op edit changed updated_at: %v", same)
	}
	// An empty value clears; flags not given stay.
	edited := mustAdmin(t, "client", "update", "--id", id, "--actor", member, "--phone", "", "--tags", "", "--email", "",
		"--client-type", "", "--display-name", "Ivy N.")
	if edited["phone"] != "" || fmt.Sprint(edited["tags"]) != "[]" || edited["email"] != nil || edited["client_type"] != "retail" ||
		edited["display_name"] != "Ivy N." || edited["first_name"] != "Ivy" {
		t.Fatalf("edited %v", edited)
	}
	want := []string{events.ClientCreated, events.ClientUpdated}
	if got := eventTypesAt(t, url); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	rows := auditRows(t, url)
	if len(rows) != 2 || rows[0].Action != "client.create" || rows[1].Action != "client.update" || rows[1].TargetID != id ||
		strings.Contains(rows[0].Details, "ivy@example.com") {
		t.Fatalf("audit %+v", rows)
	}

	cases := []struct {
		args []string
		code string
	}{
		{[]string{"client", "create", "--org", org, "--actor", member}, "invalid_parameter"},
		{[]string{"client", "create", "--org", org, "--store", otherStore, "--actor", member}, "not_found"},
		{[]string{"client", "create", "--org", org, "--store", store, "--actor", member, "--client-type", "vip"}, "validation_failed"},
		{[]string{"client", "update", "--id", id, "--actor", member, "--email", "nope"}, "validation_failed"},
		{[]string{"client", "update", "--id", id, "--actor", member, "--phone", strings.Repeat("9", 201)}, "validation_failed"},
		{[]string{"client", "update", "--id", "00000000-0000-0000-0000-000000000001", "--actor", member}, "not_found"},
		{[]string{"client", "update", "--actor", member}, "invalid_parameter"},
	}
	for _, c := range cases {
		_, err := admin(t, c.args...)
		wantCode(t, err, c.code)
	}
	// The email was cleared above, so it is free again; taken, it conflicts.
	mustAdmin(t, "client", "create", "--org", org, "--store", store, "--actor", member, "--email", "ivy@example.com")
	_, err := admin(t, "client", "update", "--id", id, "--actor", member, "--email", "IVY@example.com")
	wantCode(t, err, "conflict")
}
