//go:build tools

// Package workflowcheck pins Temporal's workflowcheck analyzer in its own module so its
// dependencies never mix with the service's. `make bin/workflowcheck` builds it; `make vet` runs it
// over ./workflows/..., whose code must stay deterministic.
package workflowcheck

import _ "go.temporal.io/sdk/contrib/tools/workflowcheck"
