package workspace

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// KeyAction is what an integration key did, for the audit log: an org's storefront or middleware
// acting through the Integration API (docs/integration-api.md).
type KeyAction struct {
	OrgID, KeyID       uuid.UUID
	Action, TargetType string
	TargetID           uuid.UUID
	Details            map[string]any
}

// AuditKey writes the audit row of an integration key's action: the key is its actor (actor_key_id),
// no person is (actor_id null). Call it inside the transaction of the action it records, so a
// refused or failed action leaves no row.
func AuditKey(ctx context.Context, tx *gorm.DB, a KeyAction) error {
	if a.Details == nil {
		a.Details = map[string]any{}
	}
	raw, err := json.Marshal(a.Details)
	if err != nil {
		return fmt.Errorf("write audit log: %w", err)
	}
	err = tx.WithContext(ctx).Exec(`INSERT INTO audit_log (id, org_id, actor_id, actor_key_id, action, target_type, target_id, details)
		VALUES (?, ?, NULL, ?, ?, ?, ?, ?::jsonb)`, uuid.New(), a.OrgID, a.KeyID, a.Action, a.TargetType, a.TargetID, string(raw)).Error
	if err != nil {
		return fmt.Errorf("write audit log: %w", err)
	}
	return nil
}
