// The workspace's rows: orgs, their stores, operators (users), their memberships and roles, and the
// audit log.

package models

import (
	"time"

	"github.com/google/uuid"
)

// Role is an org member's role.
type Role string

// Roles. Owners and admins manage keys and endpoints; members may list.
const (
	RoleOwner  Role = "owner"
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleOwner || r == RoleAdmin || r == RoleMember }

// Org is a workspace.
type Org struct {
	ID        uuid.UUID
	Name      string
	CreatedAt time.Time `gorm:"default:now()"`
}

// Store belongs to an org; orders, clients and vendors belong to a store.
type Store struct {
	ID        uuid.UUID
	OrgID     uuid.UUID
	Name      string
	Currency  string
	CreatedAt time.Time `gorm:"default:now()"`
}

// User is an operator; the token authenticates the Operator API and is stored only as a hash.
type User struct {
	ID        uuid.UUID
	Email     string
	TokenHash []byte
	// TokenRevokedAt is set while the token is revoked; rotating clears it.
	TokenRevokedAt *time.Time
	CreatedAt      time.Time `gorm:"default:now()"`
}

// Membership gives a user a role in an org.
type Membership struct {
	OrgID     uuid.UUID `gorm:"primaryKey"`
	UserID    uuid.UUID `gorm:"primaryKey"`
	Role      Role
	CreatedAt time.Time `gorm:"default:now()"`
}

// AuditEntry records an operator action, as workspace.Audit writes it. Details never hold secrets.
// The Operator API reads the log through its own view (workspace.AuditEntry), whose actor may be null.
type AuditEntry struct {
	ID      uuid.UUID `json:"id"`
	OrgID   uuid.UUID `json:"org_id"`
	ActorID uuid.UUID `json:"actor_id"`
	// ActorKeyID is the integration key that acted instead of an operator; workspace.AuditAct writes
	// those rows (with no ActorID), so an operator's row leaves it nil.
	ActorKeyID *uuid.UUID     `json:"actor_key_id"`
	Action     string         `json:"action"`
	TargetType string         `json:"target_type"`
	TargetID   uuid.UUID      `json:"target_id"`
	Details    map[string]any `json:"details" gorm:"serializer:json"`
	CreatedAt  time.Time      `json:"created_at" gorm:"default:clock_timestamp()"`
}

// TableName is the audit table's name.
func (AuditEntry) TableName() string { return "audit_log" }
