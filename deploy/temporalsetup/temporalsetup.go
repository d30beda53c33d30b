// Package temporalsetup holds the two shell scripts that prepare a Temporal cluster for wds: its
// schema in PostgreSQL (schema.sh) and its namespace and search attributes (setup.sh). The compose
// file mounts them into its admin-tools one-shots and the tests' cluster runs the embedded copies, so
// production and the tests cannot drift; deploy/compose_test.go checks the compose side.
package temporalsetup

import _ "embed"

// Schema creates Temporal's databases and brings their schemas to the release's version.
//
//go:embed schema.sh
var Schema string

// Setup creates the namespace and the Wds* search attributes once the cluster serves.
//
//go:embed setup.sh
var Setup string
