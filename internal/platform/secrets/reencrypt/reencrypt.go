// Package reencrypt re-seals every secret stored at rest under the current WDS_ENCRYPTION_KEY, the
// last step of a key rotation (docs/production.md): run with a Box that also opens the previous keys,
// it leaves no value that needs them.
package reencrypt

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/secrets"
)

// Column is one table column holding sealed values, keyed by a uuid id.
type Column struct {
	Table  string `json:"table"`
	Column string `json:"column"`
}

// Columns are every place a sealed secret is stored. A new sealed column must be added here, or a
// rotation would leave it readable only under the old key.
var Columns = []Column{
	{Table: "webhook_endpoints", Column: "secret_sealed"},
	{Table: "webhook_endpoints", Column: "previous_secret_sealed"},
	{Table: "webhook_endpoints", Column: "headers_sealed"},
	{Table: "integration_keys", Column: "signing_secret_sealed"},
}

// Result counts what one column held.
type Result struct {
	Column
	// Resealed values were under a previous key and are now under the current one.
	Resealed int `json:"resealed"`
	// Current values were already under the current key.
	Current int `json:"current"`
	// Sealed values were in plaintext and are now sealed for the first time (legacy.go).
	Sealed int `json:"sealed"`
}

// batchSize bounds each read, so a large table is walked without holding it all in memory.
var batchSize = 500 // a variable only so tests can walk several batches with few rows

// Run re-seals every value of every column that is not under box's sealing key. It is safe while the
// service runs: each row is replaced only if it still holds the value that was read (a secret rotated
// meanwhile is already sealed under the current key), and running it again finds nothing to do. A
// value no key of box opens stops the run with an error naming the row, before anything is lost.
func Run(ctx context.Context, db *gorm.DB, box *secrets.Box) ([]Result, error) {
	out := make([]Result, 0, len(Columns))
	for _, col := range Columns {
		r, err := column(ctx, db, box, col)
		out = append(out, r)
		if err != nil {
			return out, err
		}
	}
	r, err := sealLegacyHeaders(ctx, db, box)
	return append(out, r), err
}

type sealedRow struct {
	ID     uuid.UUID
	Sealed []byte
}

func column(ctx context.Context, db *gorm.DB, box *secrets.Box, col Column) (Result, error) {
	r := Result{Column: col}
	// Table and column names come from Columns, never from input.
	sel := fmt.Sprintf("SELECT id, %s AS sealed FROM %s WHERE %[1]s IS NOT NULL AND id > ? ORDER BY id LIMIT ?", col.Column, col.Table)
	upd := fmt.Sprintf("UPDATE %s SET %s = ? WHERE id = ? AND %[2]s = ?", col.Table, col.Column)
	after := uuid.Nil
	for {
		var rows []sealedRow
		if err := db.WithContext(ctx).Raw(sel, after, batchSize).Find(&rows).Error; err != nil {
			return r, fmt.Errorf("read %s.%s: %w", col.Table, col.Column, err)
		}
		for _, row := range rows {
			if box.SealedWithCurrent(row.Sealed) {
				r.Current++
				continue
			}
			resealed, err := reseal(box, row.Sealed)
			if err != nil {
				return r, fmt.Errorf("%s %s: %w (is its key missing from WDS_ENCRYPTION_KEY_PREVIOUS?)", col.Table, row.ID, err)
			}
			res := db.WithContext(ctx).Exec(upd, resealed, row.ID, row.Sealed)
			if res.Error != nil {
				return r, fmt.Errorf("re-seal %s %s: %w", col.Table, row.ID, res.Error)
			}
			if res.RowsAffected == 1 {
				r.Resealed++
			} else {
				r.Current++ // replaced meanwhile, under the current key
			}
		}
		if len(rows) < batchSize {
			return r, nil
		}
		after = rows[len(rows)-1].ID
	}
}

func reseal(box *secrets.Box, sealed []byte) ([]byte, error) {
	plain, err := box.Open(sealed)
	if err != nil {
		return nil, err
	}
	return box.Seal(plain)
}
