package views

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/paging"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// seed fills clients and vendors for several orgs so the planner faces a table where a
// sequential scan plus sort would be a real choice.
func seed(t testing.TB, db *gorm.DB, perOrg int) []uuid.UUID {
	t.Helper()
	var orgs []uuid.UUID
	for i := 0; i < 4; i++ {
		org, store := uuid.New(), uuid.New()
		orgs = append(orgs, org)
		db.Exec("INSERT INTO orgs (id, name) VALUES (?, 'o')", org)
		db.Exec("INSERT INTO stores (id, org_id, name) VALUES (?, ?, 's')", store, org)
		for _, q := range []string{
			`INSERT INTO clients (id, org_id, store_id, updated_at)
			 SELECT gen_random_uuid(), ?, ?, now() - g * interval '1 second' FROM generate_series(1, ?) g`,
			`INSERT INTO vendors (id, org_id, store_id, name, updated_at)
			 SELECT gen_random_uuid(), ?, ?, 'v', now() - g * interval '1 second' FROM generate_series(1, ?) g`,
		} {
			if err := db.Exec(q, org, store, perOrg).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Exec("ANALYZE")
	return orgs
}

func TestListQueriesAreKeysetIndexScans(t *testing.T) {
	db := pgtest.New(t)
	orgs := seed(t, db, 50000)
	deep := &paging.Cursor{At: time.Now().Add(-40000 * time.Second), ID: uuid.New()}
	cases := []struct {
		table, sel, index string
	}{
		{"clients", clientSelect, "clients_keyset"},
		{"vendors", vendorSelect, "vendors_keyset"},
	}
	for _, c := range cases {
		for _, cur := range []*paging.Cursor{nil, deep} {
			tail, args := Keyset(ListQuery{Scope: Scope{OrgID: orgs[2]}, Cursor: cur, Limit: 50}, "t.org_id", "t.store_id")
			pgtest.CheckKeysetScan(t, db, fmt.Sprintf("%s (deep=%v)", c.table, cur != nil), c.table, c.index, c.sel+tail, args...)
		}
	}
}
