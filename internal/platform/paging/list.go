// The lists of an org the Operator API and the console page through (its keys, its audit log):
// role-checked by their packages, keyset-paginated here on their (org_id, <time> DESC, id DESC)
// indexes, in the org's turn at its reads.

package paging

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/ratelimit"
)

// List runs a keyset query over table t whose time column is atCol: predicates where (ANDed, with
// args) plus the cursor, newest first, one row more than the page to learn whether another follows.
// The page is read in the org's turn at its reads (reads, NewReadPacer; nil: unpaced).
func List[T any](ctx context.Context, db *gorm.DB, reads *ratelimit.Pacer, q OrgQuery, sel, atCol string, where []string, args []any,
	key func(T) (time.Time, uuid.UUID)) (Page[T], error) {
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	done, err := reads.Take(ctx, q.OrgID.String(), ReadsPaced)
	if err != nil {
		return Page[T]{}, err
	}
	defer done()
	sql, args := pageSQL(q, sel, atCol, where, args)
	rows := []T{}
	if err := db.WithContext(ctx).Raw(sql, args...).Find(&rows).Error; err != nil {
		return Page[T]{}, fmt.Errorf("list: %w", err)
	}
	n, more := Fit(rows, q.Limit)
	p := Page[T]{Rows: rows[:n]}
	if more {
		at, id := key(p.Rows[n-1])
		p.NextCursor = &Cursor{At: at, ID: id}
	}
	return p, nil
}

// pageSQL is the page query: the predicates match the (org_id, <time> DESC, id DESC) indexes, so a
// page is an index range scan with no sort however long the table grows.
func pageSQL(q OrgQuery, sel, atCol string, where []string, args []any) (string, []any) {
	if q.Cursor != nil {
		where = append(where, "(t."+atCol+", t.id) < (?, ?)")
		args = append(args, q.Cursor.At, q.Cursor.ID)
	}
	args = append(args, q.Limit+1)
	return sel + " WHERE " + strings.Join(where, " AND ") + " ORDER BY t." + atCol + " DESC, t.id DESC LIMIT ?", args
}
