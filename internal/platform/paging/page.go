// What every resource's list shares: the caller's Scope, keyset pages ordered by (updated_at DESC,
// id DESC), and loading one row within the scope. The resources' views are their packages': the
// order's in order, the client's in ingest, the vendor's and the product's in catalog.

package paging

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/problem"
)

// Scope limits what a caller sees: always one org, optionally one store (integration keys, or the
// Read API's store_id filter).
type Scope struct {
	OrgID   uuid.UUID
	StoreID *uuid.UUID
}

// ListQuery is one page request.
type ListQuery struct {
	Scope
	Cursor *Cursor
	Limit  int
}

// Page is the list envelope: next_cursor is null on the last page.
type Page[T any] struct {
	Rows       []T     `json:"rows"`
	NextCursor *Cursor `json:"next_cursor"`
}

// Keyset builds the WHERE and ORDER BY of a page over a table aliased t whose org column is orgCol.
// The predicates match the (org_id|store_id, updated_at DESC, id DESC) indexes, so the page is an
// index range scan with no sort. extra predicates (constants, no arguments) are ANDed in.
func Keyset(q ListQuery, orgCol, storeCol string, extra ...string) (string, []any) {
	where := extra
	var args []any
	if q.StoreID != nil {
		where = append(where, orgCol+" = ?", storeCol+" = ?")
		args = append(args, q.OrgID, *q.StoreID)
	} else {
		where = append(where, orgCol+" = ?")
		args = append(args, q.OrgID)
	}
	if q.Cursor != nil {
		where = append(where, "(t.updated_at, t.id) < (?, ?)")
		args = append(args, q.Cursor.At, q.Cursor.ID)
	}
	args = append(args, q.Limit+1)
	return " WHERE " + strings.Join(where, " AND ") + " ORDER BY t.updated_at DESC, t.id DESC LIMIT ?", args
}

// NewPage is the page of rows, the answer to a query for limit+1 rows (Keyset): it trims the extra
// row fetched to learn whether another page follows.
func NewPage[T any](rows []T, limit int, key func(T) (time.Time, uuid.UUID)) Page[T] {
	p := Page[T]{Rows: rows}
	if len(rows) > limit {
		p.Rows = rows[:limit]
		at, id := key(p.Rows[limit-1])
		p.NextCursor = &Cursor{At: at, ID: id}
	}
	if p.Rows == nil {
		p.Rows = []T{}
	}
	return p
}

// FitPage is NewPage for rows not already measured: the page also ends before the row that would take
// its JSON past MaxPageBytes (Fit), with the cursor of its last row. Clients written through the
// Integration API hold text of any length, so a page of them is bounded as a page of orders is.
func FitPage[T any](rows []T, limit int, key func(T) (time.Time, uuid.UUID)) Page[T] {
	n, more := Fit(rows, limit)
	if more {
		return CutPage(rows[:n], key)
	}
	return NewPage(rows, limit, key) // all of them: no cursor
}

// CutPage is a page whose rows ended before its limit because the next row would have taken it past
// MaxPageBytes: more rows follow, from the cursor of its last row.
func CutPage[T any](rows []T, key func(T) (time.Time, uuid.UUID)) Page[T] {
	at, id := key(rows[len(rows)-1])
	return Page[T]{Rows: rows, NextCursor: &Cursor{At: at, ID: id}}
}

// One loads a single row by id within scope, or problem.NotFound.
func One[T any](ctx context.Context, db *gorm.DB, what, query string, args ...any) (*T, error) {
	var rows []T
	if err := db.WithContext(ctx).Raw(query, args...).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load %s: %w", what, err)
	}
	if len(rows) == 0 {
		return nil, problem.Fail(problem.NotFound, "%s not found", what)
	}
	return &rows[0], nil
}

// ScopeFilter is the predicate, and its arguments, that limits a table's rows to the scope.
func ScopeFilter(s Scope, orgCol, storeCol string) (string, []any) {
	if s.StoreID != nil {
		return orgCol + " = ? AND " + storeCol + " = ?", []any{s.OrgID, *s.StoreID}
	}
	return orgCol + " = ?", []any{s.OrgID}
}
