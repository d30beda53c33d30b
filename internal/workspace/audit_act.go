package workspace

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Act is an audited act no person did: an integration key's (an org's storefront or middleware
// acting through the Integration API, docs/integration-api.md), or the service's own when KeyID is
// nil (auto-disable, an ended lease, a recovery cancelled with its endpoint), which the Operator API
// shows with a null actor_id and the console as "wds (automatic)".
type Act struct {
	OrgID              uuid.UUID
	KeyID              *uuid.UUID
	Action, TargetType string
	TargetID           uuid.UUID
	Details            map[string]any
}

// AuditAct writes the audit row of an act no person did: the key, if any, is its actor
// (actor_key_id), actor_id is null. Call it inside the transaction of the act it records, so a
// refused or failed act leaves no row.
func AuditAct(ctx context.Context, tx *gorm.DB, a Act) error {
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
