// Package models holds the GORM models of the schema (migrations/) and the domain rules that need no
// I/O. It imports no package of ours.
package models

import (
	"slices"
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

// AuditEntry records an operator action. Details never hold secrets.
type AuditEntry struct {
	ID         uuid.UUID      `json:"id"`
	OrgID      uuid.UUID      `json:"org_id"`
	ActorID    uuid.UUID      `json:"actor_id"`
	Action     string         `json:"action"`
	TargetType string         `json:"target_type"`
	TargetID   uuid.UUID      `json:"target_id"`
	Details    map[string]any `json:"details" gorm:"serializer:json"`
	CreatedAt  time.Time      `json:"created_at" gorm:"default:clock_timestamp()"`
}

// TableName is the audit table's name.
func (AuditEntry) TableName() string { return "audit_log" }

// ReadKey is a pck_live_ key.
type ReadKey struct {
	ID         uuid.UUID
	OrgID      uuid.UUID
	Name       string
	KeyHash    []byte
	KeyHint    string
	Scope      string
	CreatedBy  uuid.UUID
	CreatedAt  time.Time `gorm:"default:now()"`
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
}

// Read key scopes.
const (
	ScopeReadOnly  = "read_only"
	ScopeReadWrite = "read_write"
)

// Integration key scopes: what an integration key may write (docs/integration-api.md).
const (
	ScopeOrdersWrite    = "orders:write"
	ScopeOrdersCancel   = "orders:cancel"
	ScopePaymentsWrite  = "payments:write"
	ScopePaymentsRefund = "payments:refund"
	ScopeClientsWrite   = "clients:write"
)

// IntegrationScopes lists every integration scope.
var IntegrationScopes = []string{ScopeOrdersWrite, ScopeOrdersCancel, ScopePaymentsWrite, ScopePaymentsRefund, ScopeClientsWrite}

// Payload formats of an integration key: generic bodies, or the store platform's own order webhooks.
const (
	FormatGeneric     = "generic"
	FormatNativestore = "nativestore"
)

// IntegrationKey is a pck_int_ key pinned to one (org, store).
type IntegrationKey struct {
	ID                  uuid.UUID
	OrgID               uuid.UUID
	StoreID             uuid.UUID
	Label               string
	KeyHash             []byte
	KeyHint             string
	PayloadFormat       string
	Scopes              TextArray `gorm:"type:text[]"`
	IPAllowlist         TextArray `gorm:"type:cidr[];column:ip_allowlist"`
	RequireSignature    bool
	SigningSecretSealed []byte
	RateLimit           int
	CreatedBy           uuid.UUID
	CreatedAt           time.Time `gorm:"default:now()"`
	ExpiresAt           *time.Time
	RevokedAt           *time.Time
	LastUsedAt          *time.Time
}

// HasScope reports whether the key holds scope.
func (k *IntegrationKey) HasScope(scope string) bool { return slices.Contains(k.Scopes, scope) }

// Seller is a marketplace party whose published products an org sees through a SellerLink.
type Seller struct {
	ID        uuid.UUID
	Name      string
	CreatedAt time.Time `gorm:"default:now()"`
}

// SellerLink ties a seller to one store of an org.
type SellerLink struct {
	OrgID     uuid.UUID `gorm:"primaryKey"`
	SellerID  uuid.UUID `gorm:"primaryKey"`
	StoreID   uuid.UUID
	CreatedAt time.Time `gorm:"default:now()"`
}

// Product is a seller's shop product.
type Product struct {
	ID         uuid.UUID
	SellerID   uuid.UUID
	Name       string
	SKU        *string `gorm:"column:sku"`
	PriceCents int64
	Currency   string
	Published  bool
	CreatedAt  time.Time `gorm:"default:clock_timestamp()"`
	UpdatedAt  time.Time `gorm:"default:clock_timestamp()"`
}

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
