//go:build tools

// Package temporalserver pins the Temporal server and its SQL schema tool in their own module, so the
// cluster the tests and `make run-cluster` start is the release docker-compose.yml names, and its large
// dependency graph never mixes with the service's.
package temporalserver

import (
	_ "go.temporal.io/server/cmd/server"
	_ "go.temporal.io/server/cmd/tools/sql"
)
