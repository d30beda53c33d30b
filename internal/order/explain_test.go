package order

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/paging"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// seed fills orders for several orgs so the planner faces a table where a sequential scan plus sort
// would be a real choice.
func seed(t testing.TB, db *gorm.DB, perOrg int) []uuid.UUID {
	t.Helper()
	var orgs []uuid.UUID
	for i := 0; i < 4; i++ {
		org, store := uuid.New(), uuid.New()
		orgs = append(orgs, org)
		db.Exec("INSERT INTO orgs (id, name) VALUES (?, 'o')", org)
		db.Exec("INSERT INTO stores (id, org_id, name) VALUES (?, ?, 's')", store, org)
		if err := db.Exec(`INSERT INTO orders (id, org_id, store_id, number, currency, subtotal_cents, total_cents, status, updated_at)
			SELECT gen_random_uuid(), ?, ?, g, 'USD', 100, 100, 'invoiced', now() - g * interval '1 second'
			FROM generate_series(1, ?) g`, org, store, perOrg).Error; err != nil {
			t.Fatal(err)
		}
	}
	db.Exec("ANALYZE")
	return orgs
}

// The order list is a keyset index scan, as the client and vendor lists are (ingest/client_explain_test.go,
// catalog/vendor_explain_test.go).
func TestListQueryIsAKeysetIndexScan(t *testing.T) {
	db := pgtest.New(t)
	orgs := seed(t, db, 50000)
	deep := &paging.Cursor{At: time.Now().Add(-40000 * time.Second), ID: uuid.New()}
	for _, cur := range []*paging.Cursor{nil, deep} {
		tail, args := paging.Keyset(paging.ListQuery{Scope: paging.Scope{OrgID: orgs[2]}, Cursor: cur, Limit: 50}, "t.org_id", "t.store_id")
		pgtest.CheckKeysetScan(t, db, fmt.Sprintf("deep=%v", cur != nil), "orders", "orders_keyset", orderSelect+tail, args...)
	}
}

func TestPageQueriesReturnWhatThePlanPromises(t *testing.T) {
	db := pgtest.New(t)
	orgs := seed(t, db, 200)
	ctx := context.Background()
	p, err := List(ctx, db, paging.ListQuery{Scope: paging.Scope{OrgID: orgs[0]}, Limit: 50})
	if err != nil || len(p.Rows) != 50 || p.NextCursor == nil {
		t.Fatalf("first page: %d rows, cursor %v, err %v", len(p.Rows), p.NextCursor, err)
	}
	total := len(p.Rows)
	for p.NextCursor != nil {
		if p, err = List(ctx, db, paging.ListQuery{Scope: paging.Scope{OrgID: orgs[0]}, Cursor: p.NextCursor, Limit: 50}); err != nil {
			t.Fatal(err)
		}
		total += len(p.Rows)
	}
	if total != 200 {
		t.Fatalf("walked %d orders, want 200", total)
	}
}
