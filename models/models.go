// Package models holds the column types that rows of several packages use (TextArray, Optional). The
// rows live beside the packages that own them: workspace/rows.go (orgs, stores, users, memberships,
// roles, audit entries), delivery/rows.go (events, endpoints, deliveries, dispatches),
// apikeys/rows.go, catalog/rows.go; the keyset paging rules are in package paging. It imports no
// package of ours.
package models
