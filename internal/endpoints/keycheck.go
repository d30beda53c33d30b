package endpoints

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"wds/internal/platform/secrets"
)

// keyCheckSample is how many of the newest endpoints' signing secrets CheckKeys tries.
const keyCheckSample = 20

// ErrKeysOpenNoSecret is a process whose configured keys open none of the stored signing secrets.
var ErrKeysOpenNoSecret = errors.New("WDS_ENCRYPTION_KEY (with WDS_ENCRYPTION_KEY_PREVIOUS) opens none of the stored endpoint signing secrets")

// CheckKeys tries box on the signing secrets of the newest endpoints and fails when there are some
// and it opens none of them: a `wds serve` or `wds worker` started with the wrong WDS_ENCRYPTION_KEY
// (another deployment's, or a rotation's new key without WDS_ENCRYPTION_KEY_PREVIOUS) would seal
// secrets no other process opens, or send nothing, every attempt failing with secret_unreadable.
// One secret that opens is enough: a single bad row is the attempts' to report, not a reason to stop.
func CheckKeys(ctx context.Context, db *gorm.DB, box *secrets.Box) error {
	var sealed [][]byte
	err := db.WithContext(ctx).Raw(`SELECT secret_sealed FROM webhook_endpoints
		WHERE deleted_at IS NULL AND secret_sealed IS NOT NULL ORDER BY updated_at DESC LIMIT ?`, keyCheckSample).Scan(&sealed).Error
	if err != nil {
		return fmt.Errorf("check the encryption key against stored secrets: %w", err)
	}
	for _, s := range sealed {
		if _, err := box.Open(s); err == nil {
			return nil
		}
	}
	if len(sealed) == 0 {
		return nil
	}
	return fmt.Errorf("%w (%d tried): set the key the other wds processes use, and during a key rotation the old key in WDS_ENCRYPTION_KEY_PREVIOUS (docs/configuration.md)", ErrKeysOpenNoSecret, len(sealed))
}
