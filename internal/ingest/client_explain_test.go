package ingest_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/ingest"
	"wds/internal/platform/paging"
	"wds/test/pgtest"
)

// The client list is a keyset walk of clients_keyset, at the first page and deep in the list, in a table
// of several orgs where a sequential scan and a sort would be a real choice for the planner.
func TestClientListIsAKeysetIndexScan(t *testing.T) {
	db := pgtest.New(t)
	var orgs []uuid.UUID
	for range 4 {
		org, store := uuid.New(), uuid.New()
		orgs = append(orgs, org)
		db.Exec("INSERT INTO orgs (id, name) VALUES (?, 'o')", org)
		db.Exec("INSERT INTO stores (id, org_id, name) VALUES (?, ?, 's')", store, org)
		if err := db.Exec(`INSERT INTO clients (id, org_id, store_id, updated_at)
			SELECT gen_random_uuid(), ?, ?, now() - g * interval '1 second' FROM generate_series(1, ?) g`, org, store, 50000).Error; err != nil {
			t.Fatal(err)
		}
	}
	db.Exec("ANALYZE")
	deep := &paging.Cursor{At: time.Now().Add(-40000 * time.Second), ID: uuid.New()}
	for _, cur := range []*paging.Cursor{nil, deep} {
		tail, args := paging.Keyset(paging.ListQuery{Scope: paging.Scope{OrgID: orgs[2]}, Cursor: cur, Limit: 50}, "t.org_id", "t.store_id")
		pgtest.CheckKeysetScan(t, db, "clients", "clients", "clients_keyset", ingest.ClientSelect+tail, args...)
	}
}
