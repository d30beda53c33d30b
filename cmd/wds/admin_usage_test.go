package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wds/internal/platform/secrets"
	"wds/test/pgtest"
)

// A mistyped command or flag points at the nearest one and shows only the usage that matters, not
// every command on one line; the error stays the first line, in the usual shape, and the exit stays 1.
func TestMistakesSuggestTheNearestCommandOrFlag(t *testing.T) {
	cases := []struct {
		args      []string
		want      []string
		mustNotBe string
	}{
		{[]string{"admin", "org", "list"}, []string{`{"detail":"unknown command \"org list\"; did you mean: wds admin org create?`,
			"  wds admin org create --name STRING", "(`wds admin help` lists them all)"}, "product create"},
		{[]string{"admin", "endpont", "list"}, []string{"did you mean: wds admin endpoint list",
			"wds admin endpoint list --org UUID", "wds admin endpoint create --actor UUID"}, "product create"},
		{[]string{"admin", "read-key", "revok"}, []string{"did you mean: wds admin read-key revoke"}, "org create"},
		{[]string{"admin", "key", "create", "--org", "x"}, []string{"unknown command \\\"key create\\\"", "wds admin read-key create", "wds admin integration-key create"}, "org create --name"},
		{[]string{"admin", "org"}, []string{"did you mean: wds admin org create"}, "product create"},
		{[]string{"admin", "resend", "--id", "x"}, []string{`unknown command \"resend\"; did you mean: wds admin event resend?`,
			"wds admin event resend --actor UUID"}, "org create"},
		{[]string{"admin", "org", "create", "--nme", "x"}, []string{
			`{"detail":"flag provided but not defined: --nme; did you mean --name?","error":"invalid_parameter"}`,
			"usage: wds admin org create --name STRING"}, "product create"},
		{[]string{"admin", "endpoint", "create", "--event", "order.created"}, []string{"did you mean --events?",
			"usage: wds admin endpoint create", "  --max-attempts INT"}, "org create"},
		{[]string{"listen", "--event", "order.created"}, []string{"wds: flag provided but not defined: --event; did you mean --events?",
			"usage: wds listen --org UUID"}, "wds admin"},
	}
	for _, c := range cases {
		code, out := run(t, nil, c.args...)
		if code != 1 {
			t.Errorf("wds %s: exit %d, want 1:\n%s", strings.Join(c.args, " "), code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("wds %s: no %q in:\n%s", strings.Join(c.args, " "), w, out)
			}
		}
		if strings.Contains(out, c.mustNotBe) {
			t.Errorf("wds %s: %q in:\n%s", strings.Join(c.args, " "), c.mustNotBe, out)
		}
	}
}

// On the wds dev database endpoint create and update allow local receivers and say so once per data
// directory, not on every command.
func TestLocalReceiversNoteOncePerDataDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, devURLFile), []byte(pgtest.URL(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, devKeyFile), []byte(secrets.GenerateKey()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"DATABASE_URL=", "WDS_DATA_DIR=" + dir, "WDS_ENCRYPTION_KEY="}
	// The note is about the default: a WDS_WEBHOOK_ALLOW_PRIVATE that the test's own environment sets
	// (the children inherit it) would silence it. Setenv restores it when the test ends.
	t.Setenv("WDS_WEBHOOK_ALLOW_PRIVATE", "")
	if err := os.Unsetenv("WDS_WEBHOOK_ALLOW_PRIVATE"); err != nil {
		t.Fatal(err)
	}
	jsonOf := func(args ...string) (string, string) {
		t.Helper()
		code, out := run(t, env, args...)
		if code != 0 {
			t.Fatalf("wds %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return strings.Split(out, `"`)[3], out
	}
	org, _ := jsonOf("admin", "org", "create", "--name", "Acme")
	owner, _ := jsonOf("admin", "user", "create", "--org", org, "--email", "o@acme.example", "--role", "owner")
	ep, first := jsonOf("admin", "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1:9443/a", "--events", "order.created")
	if !strings.Contains(first, localReceiversNote) {
		t.Errorf("the first endpoint create does not say local receivers are allowed:\n%s", first)
	}
	_, second := jsonOf("admin", "endpoint", "create", "--org", org, "--actor", owner, "--url", "https://127.0.0.1:9443/b", "--events", "order.created")
	_, update := jsonOf("admin", "endpoint", "update", "--id", ep, "--actor", owner, "--url", "https://127.0.0.1:9443/c")
	for _, out := range []string{second, update} {
		if strings.Contains(out, "local receivers allowed") {
			t.Errorf("said again:\n%s", out)
		}
	}

	// A fresh data directory (another wds dev) hears it again, from update too.
	other := t.TempDir()
	for _, f := range []string{devURLFile, devKeyFile} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		_ = os.WriteFile(filepath.Join(other, f), b, 0o600)
	}
	env = []string{"DATABASE_URL=", "WDS_DATA_DIR=" + other, "WDS_ENCRYPTION_KEY="}
	if _, out := jsonOf("admin", "endpoint", "update", "--id", ep, "--actor", owner, "--url", "https://127.0.0.1:9443/d"); !strings.Contains(out, localReceiversNote) {
		t.Errorf("update on a new data directory does not say it:\n%s", out)
	}
}
