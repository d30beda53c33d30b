// Package migrations holds the versioned schema and applies it in order, recording each step
// (goose's table), so re-running is a no-op and a schema older than the binary is detectable.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

//go:embed *.sql
var files embed.FS

// Status is one migration's state.
type Status struct {
	Version int64  `json:"version"`
	Name    string `json:"name"`
	Applied bool   `json:"applied"`
}

func provider(db *sql.DB) (*goose.Provider, error) {
	sub, err := fs.Sub(files, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}

// Up applies every pending migration in order and returns how many ran.
func Up(ctx context.Context, db *sql.DB) (int, error) {
	p, err := provider(db)
	if err != nil {
		return 0, err
	}
	res, err := p.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("migrate up: %w", err)
	}
	return len(res), nil
}

// List reports every known migration and whether it is applied.
func List(ctx context.Context, db *sql.DB) ([]Status, error) {
	p, err := provider(db)
	if err != nil {
		return nil, err
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate status: %w", err)
	}
	out := make([]Status, 0, len(st))
	for _, s := range st {
		out = append(out, Status{Version: s.Source.Version, Name: s.Source.Path, Applied: s.State == goose.StateApplied})
	}
	return out, nil
}

// Pending reports whether the database lacks migrations this binary knows, so serve and worker can
// refuse to run against an older schema.
func Pending(ctx context.Context, db *sql.DB) (bool, error) {
	p, err := provider(db)
	if err != nil {
		return false, err
	}
	has, err := p.HasPending(ctx)
	if err != nil {
		return false, fmt.Errorf("migrate check: %w", err)
	}
	return has, nil
}
