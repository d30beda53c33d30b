// Package delivery is the delivery engine's writes, which the activities make as a chain runs: an
// attempt's row with the endpoint's health and the minute's counts (health.go), ending the chains
// that wait for a next attempt (drop.go), auto-disable (disable.go) and a recovery's batches
// (recovery_batch.go). The support desk's packages read what these write and call the few that
// their own changes share (dropping an endpoint's chains on disable, ending a recovery).
package delivery
