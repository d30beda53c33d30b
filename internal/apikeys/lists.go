package apikeys

import (
	"context"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/paging"
	"wds/internal/platform/ratelimit"
	"wds/internal/workspace"
	"wds/models"
)

// KeyLists pages through an org's keys of both kinds, never their secrets, for the Operator API and
// the console; minting and revoking them are Service's.
type KeyLists struct {
	db *gorm.DB
	// reads paces each org's reads (paging.NewReadPacer, WDS_OPERATOR_READ_RATE); nil leaves them
	// unpaced.
	reads *ratelimit.Pacer
}

// NewKeyLists is the key lists over db, each org's reads paced by reads (nil: unpaced).
func NewKeyLists(db *gorm.DB, reads *ratelimit.Pacer) *KeyLists {
	return &KeyLists{db: db, reads: reads}
}

// Key states as a list shows them (active, revoked, expired).
const (
	KeyActive  = "active"
	KeyRevoked = "revoked"
	KeyExpired = "expired"
)

// keyStatus derives the state; revocation wins over expiry because it was an operator's decision.
const keyStatus = `CASE WHEN t.revoked_at IS NOT NULL THEN 'revoked'
	WHEN t.expires_at IS NOT NULL AND t.expires_at <= now() THEN 'expired' ELSE 'active' END AS status`

// ReadKey is a read key without its hash: the hint (the first characters) tells keys apart.
type ReadKey struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	Hint       string     `json:"hint"`
	Scope      string     `json:"scope"`
	Status     string     `json:"status"`
	CreatedBy  uuid.UUID  `json:"created_by"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// ListReadKeys pages through the org's read keys, newest first. Any member may list them.
func (s *KeyLists) ListReadKeys(ctx context.Context, q paging.OrgQuery) (paging.Page[ReadKey], error) {
	if err := workspace.RequireRole(ctx, s.db, q.OrgID, q.ActorID, workspace.Anyone...); err != nil {
		return paging.Page[ReadKey]{}, err
	}
	return paging.List(ctx, s.db, s.reads, q, `SELECT t.id, t.name, t.key_hint AS hint, t.scope, t.created_by, t.created_at, t.expires_at,
		t.revoked_at, t.last_used_at, `+keyStatus+` FROM read_keys t`,
		"created_at", []string{"t.org_id = ?"}, []any{q.OrgID},
		func(k ReadKey) (time.Time, uuid.UUID) { return k.CreatedAt, k.ID })
}

// IntegrationKey is an integration key without its hash or sealed signing secret.
type IntegrationKey struct {
	ID               uuid.UUID        `json:"id"`
	StoreID          uuid.UUID        `json:"store_id"`
	Label            string           `json:"label"`
	Hint             string           `json:"hint"`
	PayloadFormat    string           `json:"payload_format"`
	Scopes           models.TextArray `json:"scopes" gorm:"type:text[]"`
	IPAllowlist      models.TextArray `json:"ip_allowlist" gorm:"type:text[]"`
	RequireSignature bool             `json:"require_signature"`
	RateLimit        int              `json:"rate_limit"`
	Status           string           `json:"status"`
	CreatedBy        uuid.UUID        `json:"created_by"`
	CreatedAt        time.Time        `json:"created_at"`
	ExpiresAt        *time.Time       `json:"expires_at"`
	RevokedAt        *time.Time       `json:"revoked_at"`
	LastUsedAt       *time.Time       `json:"last_used_at"`
}

// ListIntegrationKeys pages through the org's integration keys, newest first. Any member may list them.
func (s *KeyLists) ListIntegrationKeys(ctx context.Context, q paging.OrgQuery) (paging.Page[IntegrationKey], error) {
	if err := workspace.RequireRole(ctx, s.db, q.OrgID, q.ActorID, workspace.Anyone...); err != nil {
		return paging.Page[IntegrationKey]{}, err
	}
	return paging.List(ctx, s.db, s.reads, q, `SELECT t.id, t.store_id, t.label, t.key_hint AS hint, t.payload_format, t.scopes,
		t.ip_allowlist::text[] AS ip_allowlist, t.require_signature, t.rate_limit, t.created_by, t.created_at,
		t.expires_at, t.revoked_at, t.last_used_at, `+keyStatus+` FROM integration_keys t`,
		"created_at", []string{"t.org_id = ?"}, []any{q.OrgID},
		func(k IntegrationKey) (time.Time, uuid.UUID) { return k.CreatedAt, k.ID })
}
