// Package paging holds the keyset paging rules every list of every API and the CLI share: the
// cursor (the (updated_at, id) of a page's last row, at PostgreSQL's microsecond precision), how it
// is read from cursor_at and cursor_id, and the page limit; with the errors of those rules.
package paging

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"wds/internal/platform/problem"
)

// The paging rules' own errors; each unwraps to problem.BadRequest and carries its code.
// ErrInvalidParameter also serves every other malformed query parameter or command-line flag.
var (
	ErrInvalidCursor    = problem.New(problem.BadRequest, "invalid_cursor", "cursor_at and cursor_id must be given together as an RFC 3339 time and a UUID")
	ErrInvalidParameter = problem.New(problem.BadRequest, "invalid_parameter", "a query parameter is invalid")
)

// Cursor is a keyset position: the (updated_at, id) of the last row of a page.
type Cursor struct {
	At time.Time `json:"at"`
	ID uuid.UUID `json:"id"`
}

// MaxPageBytes bounds every list page by size as well as by limit: a page ends before the row that
// would take its JSON past 4 MB, with the cursor of its last row, and always holds at least one row.
// So no tenant's fat rows make a page, and the memory the shared process spends on it, enormous.
const MaxPageBytes = 4_000_000

// CursorTimeLayout keeps PostgreSQL's full microsecond precision so re-paging never skips or repeats
// rows that share a second.
const CursorTimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// MarshalJSON writes at with microsecond precision in UTC.
func (c Cursor) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// AppendJSON appends the cursor's JSON object to b.
func (c Cursor) AppendJSON(b []byte) []byte {
	b = append(b, `{"at":"`...)
	b = c.At.UTC().AppendFormat(b, CursorTimeLayout)
	b = append(b, `","id":"`...)
	b = append(b, c.ID.String()...)
	return append(b, `"}`...)
}

// ParseCursor reads the cursor_at and cursor_id query parameters. Both absent is the first page (nil);
// one alone, or either malformed, is ErrInvalidCursor.
func ParseCursor(at, id string) (*Cursor, error) {
	if at == "" && id == "" {
		return nil, nil
	}
	if at == "" || id == "" {
		return nil, problem.Fail(ErrInvalidCursor, "cursor_at and cursor_id must be given together")
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return nil, problem.Fail(ErrInvalidCursor, "cursor_at must be an RFC 3339 date-time")
	}
	if t.Year() < 1 || t.Year() > 9999 {
		return nil, problem.Fail(ErrInvalidCursor, "cursor_at is out of range")
	}
	u, err := uuid.Parse(id)
	if err != nil || len(id) != 36 {
		return nil, problem.Fail(ErrInvalidCursor, "cursor_id must be a UUID")
	}
	return &Cursor{At: t, ID: u}, nil
}

// Page limits.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// ClampLimit applies the list limit rules: default 50, above 100 clamped silently; below 1 is an error.
func ClampLimit(n int, given bool) (int, error) {
	switch {
	case !given:
		return DefaultLimit, nil
	case n < 1:
		return 0, problem.Fail(ErrInvalidParameter, "limit must be an integer from 1 to 100")
	case n > MaxLimit:
		return MaxLimit, nil
	}
	return n, nil
}

// Fit is how many of rows (a page's rows as loaded: up to limit, and one more when more follow) the
// page holds: at most limit, and no more than fit in MaxPageBytes of JSON, one always. more is true
// when rows follow the page's last one. It encodes each row to measure it, so it is for pages whose
// rows are not already measured.
func Fit[T any](rows []T, limit int) (n int, more bool) {
	size := 0
	for n < len(rows) && n < limit {
		b, err := json.Marshal(rows[n])
		if err == nil {
			size += len(b) + 1
		}
		if n > 0 && size > MaxPageBytes {
			return n, true
		}
		n++
	}
	return n, len(rows) > n
}
