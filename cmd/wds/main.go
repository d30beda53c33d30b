// Command wds is the Workspace Data Service: one program with a subcommand per role
// (`wds dev`, `serve`, `worker`, `migrate`, `admin`, `listen`, `version`).
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
)

const usage = `usage: wds <command> [-h]

  dev        all-in-one for a laptop: database, embedded Temporal dev server with its UI, API, worker
  serve      HTTP API only (Read, Integration, Operator APIs)
  worker     Temporal worker plus the outbox relay
  migrate    up | status
  admin ...  operator commands (wds admin help)
  listen     receive an org's webhooks on this laptop, like stripe listen, or tail its event
             feed with --feed (wds listen -h)
  version    print the version

Configuration comes from the environment (docs/configuration.md).
`

// commandHelp is what -h prints for the commands that take no flags of their own; admin prints its
// own, command by command.
var commandHelp = map[string]string{
	"dev": `usage: wds dev

Runs everything on a laptop: a private PostgreSQL in WDS_DATA_DIR (unless DATABASE_URL is set), an
embedded Temporal dev server with its UI on :8233 (unless TEMPORAL_ADDRESS is set), the API on
WDS_HTTP_ADDR and the worker. Prints the demo workspace it made. Ctrl-C stops everything.
`,
	"serve": `usage: wds serve

Serves the Read, Integration and Operator APIs on WDS_HTTP_ADDR until SIGTERM. Needs DATABASE_URL,
TEMPORAL_ADDRESS and WDS_ENCRYPTION_KEY; refuses a schema older than the binary (wds migrate up).
`,
	"worker": `usage: wds worker

Runs the Temporal worker that delivers webhooks and the outbox relay until SIGTERM. Needs
DATABASE_URL, TEMPORAL_ADDRESS and WDS_ENCRYPTION_KEY.
`,
	"migrate": `usage: wds migrate up|status

  up       apply every pending schema migration and register the Wds* search attributes on Temporal
           (when TEMPORAL_ADDRESS is set); both steps are idempotent
  status   print each migration and whether it is applied
`,
	"version": "usage: wds version\n\nPrints the version of this binary.\n",
}

// noArgs are the commands that take no arguments, so a stray one is a mistake, not ignored.
var noArgs = []string{"dev", "serve", "worker", "version"}

// version is set at build time (make build: -ldflags "-X main.version=...").
var version = "dev"

// commands maps a subcommand to its entry point; files add theirs in init.
var commands = map[string]func(ctx context.Context, args []string) error{
	"version": func(context.Context, []string) error {
		fmt.Printf("wds %s (%s)\n", version, runtime.Version())
		return nil
	},
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(1)
	}
	name, args := os.Args[1], os.Args[2:]
	if isHelp(name) {
		fmt.Print(usage)
		return
	}
	if commands[name] == nil {
		fmt.Fprintf(os.Stderr, "wds: unknown command %q%s\n\n%s", name, suggestCommand(name), usage)
		os.Exit(1)
	}
	if name != "admin" { // admin has flags of its own and prints its help command by command
		if code, done := checkArgs(os.Stdout, os.Stderr, name, args); done {
			os.Exit(code)
		}
	}
	// SIGINT and SIGTERM cancel ctx; each command drains and stops cleanly on it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := commands[name](ctx, args)
	stop()
	if err != nil {
		if name != "admin" { // admin reports its own errors as JSON
			fmt.Fprintln(os.Stderr, "wds:", err)
			printUsageOf(os.Stderr, err)
		}
		os.Exit(1)
	}
}

// suggestCommand is "; did you mean: wds listen?" for a mistyped command (lisen), or "" when no
// command is near, by the same rule as wds admin's suggestions.
func suggestCommand(name string) string {
	best, d := nearest(name, slices.Sorted(maps.Keys(commands)))
	if !closeEnough(name, d) {
		return ""
	}
	return "; did you mean: wds " + best + "?"
}

// checkArgs answers -h with the command's help (exit 0) and a stray argument with it too (exit 1,
// like every other mistake);
// done is false when the command should run.
func checkArgs(stdout, stderr io.Writer, name string, args []string) (code int, done bool) {
	switch {
	case slices.ContainsFunc(args, isHelp):
		fmt.Fprint(stdout, commandHelp[name])
		return 0, true
	case slices.Contains(noArgs, name) && len(args) > 0:
		fmt.Fprintf(stderr, "wds %s: unexpected argument %q\n\n%s", name, args[0], commandHelp[name])
		return 1, true
	}
	return 0, false
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}
