//go:build tools

// Package temporal pins the Temporal CLI (dev server + UI) in its own module so
// its large dependency graph never mixes with the service's.
package temporal

import _ "github.com/temporalio/cli/cmd/temporal"
