package ingest

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/internal/platform/problem"
	"wds/models"
)

// An external id names an entity for one integration key: external_refs maps (key, entity type,
// external id) to the entity's id. This file writes that SQL, once: a claim inserts the mapping
// unless the external id is already known, and the table's primary key settles a race (a
// concurrent claim of the same id waits for the first transaction to end, then inserts nothing); a
// lookup reads the mapping. Statements that claim or look up as one of their steps embed these.

// Entity types of external_refs.
const (
	entityOrder   = "order"
	entityPayment = "payment"
	entityClient  = "client"
)

// ref is an external id of an entity type for a key. A nil key (an app write has none) is SQL NULL,
// which no row matches.
type ref struct {
	key        *uuid.UUID
	entity     string
	externalID string
}

// ref is the external id of the op's key.
func (o *op) ref(entity, externalID string) ref { return ref{o.keyID(), entity, externalID} }

// claimSQL claims a ref for an internal id if cond (SQL following the select list: a FROM, a WHERE,
// or nothing) yields a row, and returns the internal id if it made the mapping. Its arguments are
// claimArgs, then cond's.
func claimSQL(cond string) string {
	return `INSERT INTO external_refs (integration_key_id, entity_type, external_id, internal_id)
		SELECT ?, ?, ?, ? ` + cond + ` ON CONFLICT DO NOTHING RETURNING internal_id`
}

func (r ref) claimArgs(internalID uuid.UUID) []any {
	return []any{database.NullableID(r.key), r.entity, r.externalID, internalID}
}

// lookupSQL reads the internal id of a ref; its arguments are lookupArgs.
const lookupSQL = `SELECT internal_id FROM external_refs
	WHERE integration_key_id = ? AND entity_type = ? AND external_id = ?`

func (r ref) lookupArgs() []any { return []any{database.NullableID(r.key), r.entity, r.externalID} }

// claimRef records externalID -> candidate for the key unless the external id is already known, and
// returns the id it maps to and whether this call made the mapping; a loser of a race reads the
// winner's id.
func (o *op) claimRef(entity, externalID string, candidate uuid.UUID) (uuid.UUID, bool, error) {
	var won []uuid.UUID
	err := o.tx.Raw(claimSQL(""), o.ref(entity, externalID).claimArgs(candidate)...).Find(&won).Error
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("claim %s external_id: %w", entity, err)
	}
	if len(won) == 1 {
		return candidate, true, nil
	}
	id, err := o.lookupRef(entity, externalID)
	if err != nil {
		return uuid.Nil, false, err
	}
	return id, false, nil
}

// lookupRef reads the internal id of a known external id, or ErrNotFound.
func (o *op) lookupRef(entity, externalID string) (uuid.UUID, error) {
	return lookupRef(o.ctx, o.tx, o.key, entity, externalID)
}

func lookupRef(ctx context.Context, db *gorm.DB, key *models.IntegrationKey, entity, externalID string) (uuid.UUID, error) {
	var ids []uuid.UUID
	err := db.WithContext(ctx).Raw(lookupSQL, ref{&key.ID, entity, externalID}.lookupArgs()...).Find(&ids).Error
	if err != nil {
		return uuid.Nil, fmt.Errorf("look up %s external_id: %w", entity, err)
	}
	if len(ids) == 0 {
		return uuid.Nil, problem.Fail(problem.NotFound, "no %s with external_id %q", entity, externalID)
	}
	return ids[0], nil
}
