package database

import "fmt"

// Arena keeps the raw JSON columns of one read's rows in a few shared buffers. pgx's own *[]byte
// target allocates a slice for every column of every row: four an order, two hundred a list page,
// each later swept by the collector.
type Arena struct{ buf []byte }

// An arena's first buffer is small, for a read of one row; each next one is twice the last, up to
// the largest, so a list page's JSON columns take a handful.
const (
	firstChunk   = 4 << 10
	largestChunk = 32 << 10
)

// RawTarget is a Scan target for a json column read into *dst, kept in the arena. A NULL is nil.
func (a *Arena) RawTarget(dst *[]byte) any { return rawTarget{a, dst} }

// keep copies src into the arena. The copy's capacity ends with it, so that appending to one
// column's bytes cannot overwrite the next one's.
func keep[S []byte | string](a *Arena, src S) []byte {
	if cap(a.buf)-len(a.buf) < len(src) {
		a.buf = make([]byte, 0, max(min(2*cap(a.buf), largestChunk), firstChunk, len(src)))
	}
	start := len(a.buf)
	a.buf = append(a.buf, src...)
	return a.buf[start:len(a.buf):len(a.buf)]
}

type rawTarget struct {
	a   *Arena
	dst *[]byte
}

// ScanBytes is pgx's path: src is pgx's read buffer, reused for the next row.
func (t rawTarget) ScanBytes(src []byte) error {
	if src == nil {
		*t.dst = nil
		return nil
	}
	*t.dst = keep(t.a, src)
	return nil
}

// Scan is database/sql's path, inside a transaction: its []byte is the driver's and may be reused too.
func (t rawTarget) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*t.dst = nil
	case []byte:
		*t.dst = keep(t.a, v)
	case string:
		*t.dst = keep(t.a, v)
	default:
		return fmt.Errorf("scan json: %T is not text", src)
	}
	return nil
}
