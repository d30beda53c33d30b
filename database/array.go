package database

import "github.com/jackc/pgx/v5/pgtype"

// Array passes s as one PostgreSQL array parameter, sent in binary. GORM would expand a plain slice
// into a list, and a driver.Valuer such as models.TextArray goes to text and is parsed back.
// An empty s needs its zero-length dimension too: without Dims pgx writes no array header at all.
func Array[T any](s []T) pgtype.Array[T] {
	return pgtype.Array[T]{Elements: s, Dims: []pgtype.ArrayDimension{{Length: int32(len(s)), LowerBound: 1}}, Valid: true}
}
