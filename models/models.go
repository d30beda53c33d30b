// Package models holds the webhook engine's rows that several domains share (events, endpoints,
// deliveries and dispatches) and the column types rows use (TextArray, Optional). Rows one domain
// owns live beside it (workspace/rows.go: orgs, stores, users, memberships, roles, audit entries;
// apikeys/rows.go, catalog/rows.go), and the keyset paging rules in package paging. It imports no
// package of ours.
package models

import (
	"time"

	"github.com/google/uuid"
)

// Event is an outbox row: written with the business rows, delivered by the webhook engine.
type Event struct {
	ID           uuid.UUID
	OrgID        uuid.UUID
	StoreID      *uuid.UUID
	Type         string
	Body         []byte    `gorm:"type:json"`
	CreatedAt    time.Time `gorm:"default:clock_timestamp()"`
	DispatchedAt *time.Time
}
