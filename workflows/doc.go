// Package workflows holds wds's Temporal workflows, and nothing but deterministic code: one
// workflow per webhook event that fans out to one retry chain per subscribed endpoint (the ladder's
// delays are durable timers anchored on the first attempt), a re-fire and a test delivery as
// workflows of their own, and a recovery that re-fires an endpoint's dropped chains batch by batch.
//
// Workflows carry ids only: the activities (package activities, called through typed method
// references on a nil *activities.Activities) load bodies from PostgreSQL, since Temporal caps a
// payload at 2 MiB and an event may be 6 MB. What history records (names, ids, inputs, results) is
// package contract's; package worker registers the workflows under those names. The import rule and
// Temporal's workflowcheck analyzer (determinism_test.go, make vet) keep this package deterministic.
package workflows
