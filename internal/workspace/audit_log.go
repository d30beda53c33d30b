// The org's audit log as the Operator API and the console page through it.

package workspace

import (
	"context"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/paging"
	"wds/internal/platform/ratelimit"
)

// AuditLog reads the org's audit log and names what its rows mention.
type AuditLog struct {
	db *gorm.DB
	// reads paces each org's reads (paging.NewReadPacer, WDS_OPERATOR_READ_RATE); nil leaves them
	// unpaced.
	reads *ratelimit.Pacer
}

// NewAuditLog is the audit log over db, each org's reads paced by reads (nil: unpaced).
func NewAuditLog(db *gorm.DB, reads *ratelimit.Pacer) *AuditLog {
	return &AuditLog{db: db, reads: reads}
}

// AuditEntry is one audit row as the Operator API shows it. Its actor is an operator (ActorID) or
// an integration key acting through the Integration API (ActorKeyID); both are nil for what the
// service did by itself (an endpoint disabled for failing, docs/support.md#3-an-endpoint-the-service-disabled).
type AuditEntry struct {
	ID         uuid.UUID      `json:"id"`
	ActorID    *uuid.UUID     `json:"actor_id"`
	ActorKeyID *uuid.UUID     `json:"actor_key_id"`
	Action     string         `json:"action"`
	TargetType string         `json:"target_type"`
	TargetID   uuid.UUID      `json:"target_id"`
	Details    map[string]any `json:"details" gorm:"serializer:json"`
	CreatedAt  time.Time      `json:"created_at"`
}

// ListAudit pages through the org's audit log, newest first. Owners and admins only: the log names
// who did what to which key.
func (s *AuditLog) ListAudit(ctx context.Context, q paging.OrgQuery) (paging.Page[AuditEntry], error) {
	if err := RequireRole(ctx, s.db, q.OrgID, q.ActorID, Managers...); err != nil {
		return paging.Page[AuditEntry]{}, err
	}
	return paging.List(ctx, s.db, s.reads, q, `SELECT t.id, t.actor_id, t.actor_key_id, t.action, t.target_type, t.target_id, t.details, t.created_at FROM audit_log t`,
		"created_at", []string{"t.org_id = ?"}, []any{q.OrgID},
		func(e AuditEntry) (time.Time, uuid.UUID) { return e.CreatedAt, e.ID })
}
