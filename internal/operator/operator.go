// Package operator holds what the Operator API reads: an org's read and integration keys (never their
// secrets), and its audit log. Each list is role-checked and
// keyset-paginated on an index, like the Read API's views. The lists are the methods of Service.
// Minting and revoking keys stay in apikeys, the one place both the CLI and the HTTP API call.
package operator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/paging"
	"wds/internal/platform/ratelimit"
	"wds/internal/workspace"
)

// Service reads the Operator API's lists from the database.
type Service struct {
	db *gorm.DB
	// reads paces each org's reads (paging.NewReadPacer, WDS_OPERATOR_READ_RATE); nil leaves
	// them unpaced.
	reads *ratelimit.Pacer
}

// NewService is the lists over db, each org's reads paced by reads (nil: unpaced).
func NewService(db *gorm.DB, reads *ratelimit.Pacer) *Service { return &Service{db: db, reads: reads} }

// turn waits for the org's turn at its reads and returns the function that ends it.
func (s *Service) turn(ctx context.Context, org uuid.UUID) (func(), error) {
	return s.reads.Take(ctx, org.String(), paging.ReadsPaced)
}

// Page is one page of a list: paging.Page, so every list of every API has the same envelope.
type Page[T any] = paging.Page[T]

// Query is what every list takes (paging.OrgQuery).
type Query = paging.OrgQuery

// list runs a keyset query over table t whose time column is atCol: predicates where (ANDed, with
// args) plus the cursor, newest first, one row more than the page to learn whether another follows.
func list[T any](ctx context.Context, s *Service, q Query, sel, atCol string, where []string, args []any,
	key func(T) (time.Time, uuid.UUID)) (Page[T], error) {
	if q.Limit == 0 {
		q.Limit = paging.DefaultLimit
	}
	done, err := s.turn(ctx, q.OrgID)
	if err != nil {
		return Page[T]{}, err
	}
	defer done()
	sql, args := pageSQL(q, sel, atCol, where, args)
	rows := []T{}
	if err := s.db.WithContext(ctx).Raw(sql, args...).Find(&rows).Error; err != nil {
		return Page[T]{}, fmt.Errorf("list: %w", err)
	}
	n, more := paging.Fit(rows, q.Limit)
	p := Page[T]{Rows: rows[:n]}
	if more {
		at, id := key(p.Rows[n-1])
		p.NextCursor = &paging.Cursor{At: at, ID: id}
	}
	return p, nil
}

// pageSQL is the page query: the predicates match the (org_id, <time> DESC, id DESC) indexes, so a
// page is an index range scan with no sort however long the table grows.
func pageSQL(q Query, sel, atCol string, where []string, args []any) (string, []any) {
	if q.Cursor != nil {
		where = append(where, "(t."+atCol+", t.id) < (?, ?)")
		args = append(args, q.Cursor.At, q.Cursor.ID)
	}
	args = append(args, q.Limit+1)
	return sel + " WHERE " + strings.Join(where, " AND ") + " ORDER BY t." + atCol + " DESC, t.id DESC LIMIT ?", args
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
func (s *Service) ListAudit(ctx context.Context, q Query) (Page[AuditEntry], error) {
	if err := workspace.RequireRole(ctx, s.db, q.OrgID, q.ActorID, workspace.Managers...); err != nil {
		return Page[AuditEntry]{}, err
	}
	return list(ctx, s, q, `SELECT t.id, t.actor_id, t.actor_key_id, t.action, t.target_type, t.target_id, t.details, t.created_at FROM audit_log t`,
		"created_at", []string{"t.org_id = ?"}, []any{q.OrgID},
		func(e AuditEntry) (time.Time, uuid.UUID) { return e.CreatedAt, e.ID })
}
