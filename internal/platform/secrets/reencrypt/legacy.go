package reencrypt

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/secrets"
	"wds/models"
)

// legacyHeaders is where endpoints written before header values were sealed (migration 00024), or
// edited since by a version that does not seal them, hold them: in plaintext
// (models.HeadersFromPlaintext).
var legacyHeaders = Column{Table: "webhook_endpoints", Column: "headers"}

type legacyRow struct {
	ID            uuid.UUID
	Headers       models.Headers
	HeadersSealed []byte
}

// sealLegacyHeaders seals the header values such rows hold, the way the service writes them
// (models.SealHeaders), batch by batch; it reads every endpoint (an org has a few dozen at most).
// Each row is replaced only if it still holds what was read, so an edit meanwhile is left alone.
func sealLegacyHeaders(ctx context.Context, db *gorm.DB, box *secrets.Box) (Result, error) {
	r := Result{Column: legacyHeaders}
	after := uuid.Nil
	for {
		var rows []legacyRow
		err := db.WithContext(ctx).Raw(`SELECT id, headers, headers_sealed FROM webhook_endpoints WHERE id > ? ORDER BY id LIMIT ?`,
			after, batchSize).Find(&rows).Error
		if err != nil {
			return r, fmt.Errorf("read legacy headers: %w", err)
		}
		for _, row := range rows {
			plain, inPlaintext, err := models.HeadersFromPlaintext(box, row.Headers, row.HeadersSealed)
			if err != nil {
				return r, fmt.Errorf("webhook_endpoints %s: %w", row.ID, err)
			}
			if !inPlaintext {
				continue
			}
			names, sealed, err := models.SealHeaders(box, plain)
			if err != nil {
				return r, fmt.Errorf("webhook_endpoints %s: %w", row.ID, err)
			}
			res := db.WithContext(ctx).Exec(`UPDATE webhook_endpoints SET headers = ?, headers_sealed = ?
				WHERE id = ? AND headers = ?::jsonb AND headers_sealed IS NOT DISTINCT FROM ?`, names, sealed, row.ID, row.Headers, row.HeadersSealed)
			if res.Error != nil {
				return r, fmt.Errorf("seal headers of webhook_endpoints %s: %w", row.ID, res.Error)
			}
			r.Sealed += int(res.RowsAffected)
		}
		if len(rows) < batchSize {
			return r, nil
		}
		after = rows[len(rows)-1].ID
	}
}
