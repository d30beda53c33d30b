// Package apikeys mints, revokes and authenticates API keys. Keys are random, shown once, and stored
// only as SHA-256 hashes, so authentication is a lookup by hash (nothing to steal from the database).
// The operations are the methods of Service, which the APIs, the console and the CLI call; keys emit
// no webhook events, so the service needs no event starter. The key rows, scopes and payload formats
// are models' (models/apikeys.go).
package apikeys

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
)

// Service runs the key operations over the database. box seals and opens integration keys' signing
// secrets; nil refuses to mint integration keys that require signatures and to open their secrets.
type Service struct {
	db  *gorm.DB
	box *secrets.Box
}

// NewService is the key operations over db, sealing with box.
func NewService(db *gorm.DB, box *secrets.Box) *Service { return &Service{db: db, box: box} }

// ReadKeyPrefix marks Read API keys.
const ReadKeyPrefix = "pck_live_"

// hintLen is how much of a key is kept in clear so operators can tell keys apart.
const hintLen = 12

// NewReadKey is what minting a read key asks for.
type NewReadKey struct {
	OrgID     uuid.UUID
	ActorID   uuid.UUID
	Scope     string
	Name      string
	ExpiresAt *time.Time
}

// CreateReadKey mints a key (owners and admins only) and audits it. The plaintext is returned once.
func (s *Service) CreateReadKey(ctx context.Context, in NewReadKey) (*models.ReadKey, string, error) {
	if err := workspace.RequireRole(ctx, s.db, in.OrgID, in.ActorID, workspace.Managers...); err != nil {
		return nil, "", err
	}
	if in.Scope == "" {
		in.Scope = models.ScopeReadOnly
	}
	if in.Scope != models.ScopeReadOnly && in.Scope != models.ScopeReadWrite {
		return nil, "", problem.Fail(problem.Invalid, "scope must be read_only or read_write")
	}
	plain, hash, err := secrets.NewAPIKey(ReadKeyPrefix)
	if err != nil {
		return nil, "", err
	}
	k := &models.ReadKey{ID: uuid.New(), OrgID: in.OrgID, Name: in.Name, KeyHash: hash,
		KeyHint: plain[:hintLen], Scope: in.Scope, CreatedBy: in.ActorID, ExpiresAt: in.ExpiresAt}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(k).Error; err != nil {
			return err
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: in.OrgID, ActorID: in.ActorID,
			Action: "read_key.create", TargetType: "read_key", TargetID: k.ID,
			Details: map[string]any{"scope": k.Scope, "name": k.Name, "hint": k.KeyHint, "expires_at": k.ExpiresAt}})
	})
	if err != nil {
		return nil, "", fmt.Errorf("create read key: %w", err)
	}
	return k, plain, nil
}

// RevokeReadKey revokes a key (owners and admins of its org) and audits it. Revoking twice keeps the
// first revocation time. A key of an org the actor is not in is not found, as an unknown one is.
func (s *Service) RevokeReadKey(ctx context.Context, id, actorID uuid.UUID) (*models.ReadKey, error) {
	var k models.ReadKey
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&k).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return problem.Fail(problem.NotFound, "read key %s not found", id)
			}
			return err
		}
		if err := workspace.RequireRowRole(ctx, tx, k.OrgID, actorID, "read key", id, workspace.Managers...); err != nil {
			return err
		}
		if err := tx.Raw("UPDATE read_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ? RETURNING revoked_at", id).
			Find(&k.RevokedAt).Error; err != nil {
			return err
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: k.OrgID, ActorID: actorID,
			Action: "read_key.revoke", TargetType: "read_key", TargetID: k.ID, Details: map[string]any{"hint": k.KeyHint}})
	})
	if err != nil {
		return nil, fmt.Errorf("revoke read key: %w", err)
	}
	return &k, nil
}

// AuthenticateRead finds the active read key for a bearer value. Unknown, revoked, expired and
// wrong-prefix keys are all ErrInvalidAPIKey (docs/integration-api.md): a caller learns nothing about which.
func (s *Service) AuthenticateRead(ctx context.Context, bearer string, now time.Time) (*models.ReadKey, error) {
	var k models.ReadKey
	if err := findByKey(ctx, s.db, ReadKeyPrefix, bearer, &k); err != nil {
		return nil, fmt.Errorf("authenticate read key: %w", err)
	}
	if k.RevokedAt != nil || (k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)) {
		return nil, ErrInvalidAPIKey
	}
	return &k, nil
}

// findByKey loads the key row (dst) whose hash matches bearer, or ErrInvalidAPIKey. A bearer that
// cannot be a key is refused without a query, and the lookup takes its turn at the database like a
// transaction, so a flood of made-up keys queues instead of taking every connection.
func findByKey(ctx context.Context, db *gorm.DB, prefix, bearer string, dst any) error {
	if !secrets.WellFormedKey(prefix, bearer) {
		return ErrInvalidAPIKey
	}
	release, err := database.Admit(ctx, db)
	if err != nil {
		return err
	}
	defer release()
	err = db.WithContext(ctx).Where("key_hash = ?", secrets.HashAPIKey(bearer)).Take(dst).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrInvalidAPIKey
	}
	return err
}
