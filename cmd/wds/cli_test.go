package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"wds/test/pgtest"
)

// run starts the real program and waits for it; a command that should print help must not serve.
func run(t *testing.T, env []string, args ...string) (code int, out string) {
	t.Helper()
	p := startWDS(t, env, args...)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("wds %v did not exit: %s", args, p.out.String())
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		return exit.ExitCode(), p.out.String()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0, p.out.String()
}

// Support staff find their way from the program itself: -h works everywhere and exits 0, a stray
// argument is refused, and errors name flags as the docs spell them.
func TestEveryCommandExplainsItself(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--help"}, 0, "usage: wds <command>"},
		{[]string{"serve", "--help"}, 0, "usage: wds serve"},
		{[]string{"worker", "-h"}, 0, "usage: wds worker"},
		{[]string{"dev", "--help"}, 0, "usage: wds dev"},
		{[]string{"migrate", "-h"}, 0, "usage: wds migrate up|status"},
		{[]string{"serve", "now"}, 1, `unexpected argument "now"`},
		{[]string{"nope"}, 1, `unknown command "nope"`},
		{[]string{"lisen"}, 1, `unknown command "lisen"; did you mean: wds listen?`},
		{[]string{"sevre"}, 1, `unknown command "sevre"; did you mean: wds serve?`},
		{[]string{"-h"}, 0, "\n  listen     receive an org's webhooks"},
		{[]string{"listen", "-h"}, 0, "usage: wds listen --org UUID --actor UUID"},
		// flag stops at the first stray word; every flag after it would silently be dropped.
		{[]string{"listen", "--org", "5b0e7c1a-2f3d-4c8e-9a6b-0d1e2f3a4b5c", "--actor", "94d0c1b2-3a4e-4f5a-8b6c-7d8e9f0a1b2c",
			"stray", "--events", "order.created"}, 1, `unexpected argument "stray"`},
		{[]string{"admin", "integration-key", "create", "-h"}, 0,
			"usage: wds admin integration-key create --actor UUID --org UUID --scopes STRING --store UUID [--expires-at STRING]"},
		{[]string{"version"}, 0, "wds dev (go"},
		{[]string{"admin"}, 0, "wds admin org create --name STRING"},
		{[]string{"admin", "help"}, 0, "wds admin user list --org UUID"},
		{[]string{"admin", "-h"}, 0, "wds admin endpoint create --actor UUID --events STRING --org UUID --url STRING [--description STRING] [--header VALUE] [--max-attempts INT] [--rate-limit STRING]"},
		{[]string{"admin", "-h"}, 0, "wds admin endpoint recover --actor UUID --id UUID --since STRING [--until STRING] [--wait]"},
		{[]string{"admin", "read-key", "create", "--help"}, 0, "--expires-at STRING\n        RFC 3339"},
		{[]string{"admin", "user", "rotate-token", "-h"}, 0, "usage: wds admin user rotate-token --actor UUID --id UUID"},
		{[]string{"admin", "user", "revoke-token", "--id", "nope"}, 1, `invalid value \"nope\" for flag --id: must be a UUID`},
		{[]string{"admin", "store", "create", "--org", "nope"}, 1, `invalid value \"nope\" for flag --org: must be a UUID`},
		{[]string{"admin", "org", "create", "--nme", "x"}, 1, "flag provided but not defined: --nme"},
		{[]string{"admin", "org", "list"}, 1, "`wds admin help` lists them"},
		{[]string{"admin", "help"}, 0, "wds admin event resend --actor UUID [--endpoint STRING] [--id STRING] [--order STRING]\n      send an event again"},
		{[]string{"admin", "store", "create", "-h"}, 0, "usage: wds admin store create --name STRING --org UUID [--currency STRING]\n\nAdd a store to an org."},
		{[]string{"admin", "resend", "--id", "x"}, 1, "did you mean: wds admin event resend?"},
		{[]string{"admin", "version", "ramp", "-h"}, 0, "usage: wds admin version ramp --build-id STRING --percent PERCENT\n\nStart a share"},
		{[]string{"admin", "-h"}, 0, "\n  wds admin version rollback\n      make the previous version current again\n"},
		{[]string{"admin", "verison", "list"}, 1, "did you mean: wds admin version list?"},
		{[]string{"admin", "version", "ramp", "--build-id", "x", "--percent", "lots"}, 1, `invalid value \"lots\" for flag --percent`},
	}
	for _, c := range cases {
		code, out := run(t, nil, c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("wds %s: exit %d, want %d and %q in:\n%s", strings.Join(c.args, " "), code, c.code, c.want, out)
		}
	}
}

// JSON output is for people and scripts alike: no \u003c where a < was stored.
func TestAdminJSONIsNotHTMLEscaped(t *testing.T) {
	env := []string{"DATABASE_URL=" + pgtest.URL(t)}
	_, out := run(t, env, "admin", "org", "create", "--name", "Acme")
	org := strings.Split(out, `"`)[3]
	if code, out := run(t, env, "admin", "user", "create", "--org", org, "--email", "<ops>&co@acme.example", "--role", "member"); code != 0 {
		t.Fatalf("user create: %s", out)
	}
	code, out := run(t, env, "admin", "user", "list", "--org", org)
	if code != 0 || !strings.Contains(out, `"email":"<ops>&co@acme.example","role":"member"`) {
		t.Fatalf("user list: exit %d %s", code, out)
	}
}

// `wds admin help` says what each command does, in one line.
func TestEveryAdminCommandHasASummary(t *testing.T) {
	for name, c := range adminCommands {
		if c.summary == "" || strings.Contains(c.summary, "\n") {
			t.Errorf("wds admin %s: summary %q, want one line", name, c.summary)
		}
	}
}
