// Package models holds the GORM models of the tables and the column types they use (TextArray,
// Optional): webhook.go (events, endpoints, deliveries, dispatches, recoveries) with the delivery's
// Status (status.go). Some rows still live beside the packages that own them:
// internal/workspace/rows.go (orgs, stores, users, memberships, roles, audit entries),
// internal/apikeys/rows.go, internal/catalog/rows.go; the keyset paging rules are in package paging.
// It imports no package of ours.
package models
