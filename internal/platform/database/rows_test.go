package database_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/test/pgtest"
)

// EachRow reads the same values through pgx's own rows (outside a transaction) as through
// database/sql (inside one), NULLs, JSON kept in an Arena and ids scanned by IDTarget and
// NullableIDTarget included.
func TestEachRowScansAlikeInAndOutOfATransaction(t *testing.T) {
	db := openWith(t, pgtest.URL(t))
	const q = `SELECT v.id, v.name, v.doc, v.at, v.ref FROM (VALUES
		(?::uuid, 'a'::text, '{"k": [1, 2]}'::json, '2026-01-02T03:04:05.123456Z'::timestamptz, ?::uuid),
		(?::uuid, NULL, '[]'::json, NULL, NULL)) AS v(id, name, doc, at, ref) ORDER BY v.id`
	ids := []uuid.UUID{uuid.MustParse("00000000-0000-0000-0000-000000000001"), uuid.MustParse("00000000-0000-0000-0000-000000000002")}
	type row struct {
		ID   uuid.UUID
		Name *string
		Doc  json.RawMessage
		At   *time.Time
		Ref  *uuid.UUID
	}
	read := func(db *gorm.DB) []row {
		var out []row
		var arena database.Arena
		err := database.EachRow(context.Background(), db, q, []any{ids[0], ids[1], ids[1]}, func(r database.Row) error {
			v := row{Ref: &uuid.UUID{}} // a NULL must clear it
			if err := r.Scan(database.IDTarget(&v.ID), &v.Name, arena.RawTarget((*[]byte)(&v.Doc)), &v.At, database.NullableIDTarget(&v.Ref)); err != nil {
				return err
			}
			out = append(out, v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	outside := read(db)
	var inside []row
	if err := db.Transaction(func(tx *gorm.DB) error { inside = read(tx); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, got := range [][]row{outside, inside} {
		if len(got) != 2 || got[0].ID != ids[0] || got[0].Name == nil || *got[0].Name != "a" ||
			string(got[0].Doc) != `{"k": [1, 2]}` || got[0].At == nil || !got[0].At.Equal(time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)) ||
			got[0].Ref == nil || *got[0].Ref != ids[1] || got[1].ID != ids[1] ||
			got[1].Name != nil || got[1].At != nil || string(got[1].Doc) != `[]` || got[1].Ref != nil {
			t.Fatalf("rows %+v", got)
		}
	}
}

// Columns kept in one arena share its buffers but not their capacity: appending to one column's
// bytes leaves the next one's as they were, and a NULL stays nil.
func TestArenaColumnsDoNotOverlap(t *testing.T) {
	var arena database.Arena
	cols := make([][]byte, 3)
	for i, src := range [][]byte{[]byte(`[1]`), []byte(`{"a": 2}`), nil} {
		target := arena.RawTarget(&cols[i]).(interface{ ScanBytes([]byte) error })
		if err := target.ScanBytes(src); err != nil {
			t.Fatal(err)
		}
	}
	_ = append(cols[0], `,9999`...)
	if string(cols[0]) != `[1]` || string(cols[1]) != `{"a": 2}` || cols[2] != nil {
		t.Fatalf("columns %q", cols)
	}
}

// IDTarget refuses a NULL on both paths: uuid.Scan alone would read it as the zero id.
func TestIDTargetRefusesNull(t *testing.T) {
	db := openWith(t, pgtest.URL(t))
	scan := func(db *gorm.DB) error {
		return database.EachRow(context.Background(), db, `SELECT NULL::uuid`, nil, func(r database.Row) error {
			var id uuid.UUID
			return r.Scan(database.IDTarget(&id))
		})
	}
	var inside error
	_ = db.Transaction(func(tx *gorm.DB) error { inside = scan(tx); return nil })
	for name, err := range map[string]error{"pgx": scan(db), "database/sql": inside} {
		if err == nil || !strings.Contains(err.Error(), "NULL where an id is required") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// A query whose caller gives up is cancelled in PostgreSQL and reported unavailable, as through
// database/sql.
func TestEachRowEndsWithItsContext(t *testing.T) {
	db := openWith(t, pgtest.URL(t))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := database.EachRow(ctx, db, `SELECT pg_sleep(5)`, nil, func(database.Row) error { return nil })
	if !database.Unavailable(err) {
		t.Fatalf("err = %v, want one reported unavailable", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the query ran %s", took)
	}
}

// A pooled connection whose socket died unnoticed (idle too briefly to be checked) fails before
// anything is sent; EachRow drops it and reads through another, as database/sql would.
func TestEachRowRetriesAConnectionThatDied(t *testing.T) {
	db := openWith(t, pgtest.URL(t))
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.SetMaxIdleConns(1)
	conn, err := sqlDB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = conn.Raw(func(dc any) error { return dc.(*stdlib.Conn).Conn().PgConn().Conn().Close() })
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Close() // back to the pool, its socket closed under pgx
	var got int
	err = database.EachRow(context.Background(), db, `SELECT 7`, nil, func(r database.Row) error { return r.Scan(&got) })
	if err != nil || got != 7 {
		t.Fatalf("got %d, %v: want the query answered on a fresh connection", got, err)
	}
}
