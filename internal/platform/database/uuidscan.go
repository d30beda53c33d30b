package database

import (
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// IDTarget is a Scan target for a uuid column read into id. pgx copies the 16 bytes of the binary
// format into it; a *uuid.UUID is a sql.Scanner, which pgx prefers, so pgx would format the id as text
// and uuid.Scan parse it back: four times an order, that was a twentieth of a list page's CPU.
// database/sql's path (inside a transaction) still scans through uuid.Scan.
func IDTarget(id *uuid.UUID) any { return idTarget{id} }

// NullableIDTarget is IDTarget for a column that may be NULL, read into *id (nil for NULL).
func NullableIDTarget(id **uuid.UUID) any { return nullableIDTarget{id} }

type idTarget struct{ id *uuid.UUID }

var errNullID = errors.New("scan uuid: NULL where an id is required")

func (t idTarget) ScanUUID(v pgtype.UUID) error {
	if !v.Valid {
		return errNullID
	}
	*t.id = v.Bytes
	return nil
}

func (t idTarget) Scan(src any) error {
	if src == nil { // uuid.Scan would leave the zero id
		return errNullID
	}
	return t.id.Scan(src)
}

type nullableIDTarget struct{ id **uuid.UUID }

func (t nullableIDTarget) ScanUUID(v pgtype.UUID) error {
	if !v.Valid {
		*t.id = nil
		return nil
	}
	id := uuid.UUID(v.Bytes)
	*t.id = &id
	return nil
}

func (t nullableIDTarget) Scan(src any) error {
	if src == nil {
		*t.id = nil
		return nil
	}
	var id uuid.UUID
	if err := id.Scan(src); err != nil {
		return err
	}
	*t.id = &id
	return nil
}
