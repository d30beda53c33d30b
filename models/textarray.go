package models

import (
	"database/sql/driver"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
)

// TextArray is a text[] (or cidr[]) column as a Go []string. The driver hands arrays over in
// PostgreSQL's text form; pgx's own array codec parses and writes that form, quoting included.
type TextArray []string

// Scan reads a column value. NULL reads as a nil slice, an empty array as an empty one (JSON []).
func (a *TextArray) Scan(src any) error {
	raw, err := columnBytes(src, "text array")
	if err != nil || raw == nil {
		*a = nil
		return err
	}
	var out []string
	m := pgtype.NewMap()
	if err := m.PlanScan(pgtype.TextArrayOID, pgtype.TextFormatCode, &out).Scan(raw, &out); err != nil {
		return fmt.Errorf("scan text array: %w", err)
	}
	if out == nil {
		out = []string{}
	}
	*a = out
	return nil
}

// Value writes the array in PostgreSQL's text form; a nil slice is the empty array, not NULL, as
// the columns are NOT NULL.
func (a TextArray) Value() (driver.Value, error) {
	raw, err := pgtype.NewMap().Encode(pgtype.TextArrayOID, pgtype.TextFormatCode, []string(a), nil)
	if err != nil {
		return nil, fmt.Errorf("encode text array: %w", err)
	}
	if raw == nil {
		return "{}", nil
	}
	return string(raw), nil
}

// columnBytes is a column value as the driver hands text and jsonb over: nil for NULL, the bytes
// otherwise; what names the column's kind in the error for any other type.
func columnBytes(src any, what string) ([]byte, error) {
	switch v := src.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(v), nil
	case []byte:
		return v, nil
	default:
		return nil, fmt.Errorf("scan %s: unexpected %T", what, src)
	}
}
