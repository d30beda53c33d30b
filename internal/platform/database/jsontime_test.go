package database_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"wds/internal/platform/database"
	"wds/test/pgtest"
)

// Times inside the arrays PostgreSQL builds must read exactly as encoding/json writes time.Time, or
// one order would show two spellings of its timestamps.
func TestJSONTimeMatchesGo(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	for _, ts := range []time.Time{
		time.Date(2026, 11, 22, 3, 47, 15, 566237000, time.UTC),
		time.Date(2026, 11, 22, 3, 47, 15, 500000000, time.UTC),
		time.Date(2026, 11, 22, 3, 47, 10, 0, time.UTC),
		time.Date(2026, 11, 22, 3, 40, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 100000, time.UTC),
		time.Date(2026, 6, 30, 23, 59, 59, 10000, time.FixedZone("x", 5*3600)),
	} {
		var got string
		if err := db.WithContext(ctx).Raw("SELECT "+database.JSONTime("?::timestamptz"), ts).Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(ts.UTC())
		if `"`+got+`"` != string(want) {
			t.Errorf("%v: SQL wrote %s, Go writes %s", ts, got, want)
		}
	}
	var null *string
	db.Raw("SELECT " + database.JSONTime("NULL::timestamptz")).Scan(&null)
	if null != nil {
		t.Errorf("NULL became %q", *null)
	}
}
