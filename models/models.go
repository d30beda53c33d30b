// Package models holds the GORM model of every table, one file per aggregate, with the constants
// that are values of their columns and the column types they use (TextArray, Headers):
// workspace.go (orgs, stores, users, memberships and their roles, the audit log), console.go
// (console sessions), apikeys.go (read and integration keys, their scopes and payload formats),
// integration.go (the external ids an integration key claimed, the Idempotency-Key cache),
// ratelimit.go (the keys' shared rate-limit counts), client.go (clients), vendor.go (vendors and
// their claim tokens), catalog.go (sellers, their links to stores, products), order.go (orders and
// their lines, payments and shipments; the order's statuses are package order's) and webhook.go (the
// outbox's events, endpoints, the delivery log, dispatches and the counters that number them,
// recoveries, endpoint sends) with the delivery's Status (status.go). Optional is a field of an
// operator's PATCH body. The keyset paging rules are in package paging.
//
// A test (schema_test.go) holds the models to the migrated schema: a migration that adds a table or
// a column fails it until a model here has it. Writers may still write with SQL of their own (ingest
// writes orders in batches). It imports no package of ours.
package models
