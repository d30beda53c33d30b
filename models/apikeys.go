// The API keys' rows, with the values of their scope, scopes and payload_format columns.

package models

import (
	"net/netip"
	"slices"
	"time"

	"github.com/google/uuid"
)

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

// AllowsIP reports whether addr may use the key: an empty allowlist allows every address.
func (k *IntegrationKey) AllowsIP(addr string) bool {
	if len(k.IPAllowlist) == 0 {
		return true
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap() // an IPv4 client seen through an IPv6 socket matches IPv4 ranges
	for _, c := range k.IPAllowlist {
		if p, err := netip.ParsePrefix(c); err == nil && p.Contains(a) {
			return true
		}
	}
	return false
}
