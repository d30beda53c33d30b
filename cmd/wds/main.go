// Command wds is the Workspace Data Service: one program with a subcommand per role
// (decisions.md §2).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: wds <command>

  dev        all-in-one for a laptop: database, embedded Temporal dev server with its UI, API, worker
  serve      HTTP API only (Read, Integration, Operator APIs)
  worker     Temporal worker plus the outbox relay
  migrate    up | status
  admin ...  operator commands (wds admin help)
`

// commands maps a subcommand to its entry point; files add theirs in init.
var commands = map[string]func(ctx context.Context, args []string) error{}

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	// SIGINT and SIGTERM cancel ctx; each command drains and stops cleanly on it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := commands[os.Args[1]](ctx, os.Args[2:])
	stop()
	if err != nil {
		if os.Args[1] != "admin" { // admin reports its own errors as JSON
			fmt.Fprintln(os.Stderr, "wds:", err)
		}
		os.Exit(1)
	}
}
