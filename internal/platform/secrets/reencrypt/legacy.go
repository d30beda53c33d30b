package reencrypt

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/secrets"
	"wds/models"
)

// legacyHeaders is where endpoints written before header values were sealed hold them: in plaintext,
// with nothing in headers_sealed (migration 00024).
var legacyHeaders = Column{Table: "webhook_endpoints", Column: "headers"}

type legacyRow struct {
	ID      uuid.UUID
	Headers models.Headers
}

// sealLegacyHeaders seals the header values such rows hold, the way the service writes them
// (models.SealHeaders), batch by batch. Each row is replaced only if it is still unsealed and holds
// what was read, so an edit meanwhile (which writes the sealed form) is left alone.
func sealLegacyHeaders(ctx context.Context, db *gorm.DB, box *secrets.Box) (Result, error) {
	r := Result{Column: legacyHeaders}
	after := uuid.Nil
	for {
		var rows []legacyRow
		err := db.WithContext(ctx).Raw(`SELECT id, headers FROM webhook_endpoints WHERE headers_sealed IS NULL AND id > ? ORDER BY id LIMIT ?`,
			after, batchSize).Find(&rows).Error
		if err != nil {
			return r, fmt.Errorf("read legacy headers: %w", err)
		}
		for _, row := range rows {
			names, sealed, err := models.SealHeaders(box, row.Headers)
			if err != nil {
				return r, fmt.Errorf("webhook_endpoints %s: %w", row.ID, err)
			}
			res := db.WithContext(ctx).Exec(`UPDATE webhook_endpoints SET headers = ?, headers_sealed = ?
				WHERE id = ? AND headers_sealed IS NULL AND headers = ?::jsonb`, names, sealed, row.ID, row.Headers)
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
