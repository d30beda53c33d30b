package migrations

import (
	"context"
	"database/sql"
)

// Between moves a migrated database down to version from, calls seed, then up to version to, for
// tests of a migration's backfill.
func Between(ctx context.Context, db *sql.DB, from, to int64, seed func() error) error {
	p, err := provider(db)
	if err != nil {
		return err
	}
	if _, err := p.DownTo(ctx, from); err != nil {
		return err
	}
	if err := seed(); err != nil {
		return err
	}
	_, err = p.UpTo(ctx, to)
	return err
}
