package order

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/platform/paging"
	"wds/test/pgtest"
)

// Paging an org's orders older then newer walks every order once each way and comes back to the
// first page; a search by a client's email (any letter case) finds that client's orders in every
// store of the org, paged the same way, and no other org's.
func TestBrowsingOrdersBothWaysAndByClientEmail(t *testing.T) {
	db := pgtest.New(t)
	orgs := seed(t, db, 23)
	ctx := context.Background()
	walk := func(q BrowseQuery) []uuid.UUID {
		t.Helper()
		var older, newer []uuid.UUID
		p, err := Browse(ctx, db, q)
		for err == nil {
			if len(older) == 0 && p.Newer != nil {
				t.Fatalf("the first page offers Newer")
			}
			for _, o := range p.Rows {
				older = append(older, o.ID)
			}
			if p.Older == nil {
				break
			}
			q.Cursor, q.Newer = p.Older, false
			p, err = Browse(ctx, db, q)
		}
		for err == nil && p.Newer != nil { // back from the last page to the first
			q.Cursor, q.Newer = p.Newer, true
			if p, err = Browse(ctx, db, q); err == nil {
				newer = append(slices.Clone(idsOf(p.Rows)), newer...)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := older[:len(older)-lastPage(len(older), q.Limit)]; fmt.Sprint(newer) != fmt.Sprint(want) {
			t.Fatalf("walking back: %d orders %v, want %d %v", len(newer), newer, len(want), want)
		}
		return older
	}
	if all := walk(BrowseQuery{OrgID: orgs[1], Limit: 5}); len(all) != 23 {
		t.Fatalf("walked %d orders of 23", len(all))
	}

	// One client with 7 orders in store 1, one with the same email in a second store with 4; another
	// org's client with the email has orders too.
	var stores []uuid.UUID
	db.Raw("SELECT id FROM stores WHERE org_id = ?", orgs[1]).Scan(&stores)
	second := uuid.New()
	db.Exec("INSERT INTO stores (id, org_id, name) VALUES (?, ?, 's2')", second, orgs[1])
	var foreign []uuid.UUID
	db.Raw("SELECT id FROM stores WHERE org_id = ?", orgs[2]).Scan(&foreign)
	mine := map[uuid.UUID]bool{}
	for _, c := range []struct {
		org, store uuid.UUID
		email      string
		orders     int
	}{{orgs[1], stores[0], "Ada@Example.test", 7}, {orgs[1], second, "ada@example.test", 4}, {orgs[2], foreign[0], "ada@example.test", 3}} {
		client := uuid.New()
		if err := db.Exec("INSERT INTO clients (id, org_id, store_id, email) VALUES (?, ?, ?, ?)", client, c.org, c.store, c.email).Error; err != nil {
			t.Fatal(err)
		}
		var ids []uuid.UUID
		db.Raw(`UPDATE orders SET client_id = ?, store_id = ? WHERE id IN (SELECT id FROM orders WHERE org_id = ? AND client_id IS NULL
			ORDER BY number LIMIT ?) RETURNING id`, client, c.store, c.org, c.orders).Scan(&ids)
		for _, id := range ids {
			mine[id] = c.org == orgs[1]
		}
	}
	found := walk(BrowseQuery{OrgID: orgs[1], ClientEmail: "ADA@example.TEST", Limit: 3})
	if len(found) != 11 {
		t.Fatalf("the email's orders: %d, want 11", len(found))
	}
	for _, id := range found {
		if !mine[id] {
			t.Fatalf("order %s is not of the org's clients with the email", id)
		}
	}
	if p, err := Browse(ctx, db, BrowseQuery{OrgID: orgs[1], ClientEmail: "nobody@example.test", Limit: 3}); err != nil || len(p.Rows) != 0 {
		t.Fatalf("an unknown email: %v %v", p, err)
	}
}

func idsOf(rows []Order) []uuid.UUID {
	out := make([]uuid.UUID, len(rows))
	for i, o := range rows {
		out[i] = o.ID
	}
	return out
}

// lastPage is how many rows the last page of n rows in pages of limit holds.
func lastPage(n, limit int) int {
	if n%limit == 0 {
		return limit
	}
	return n % limit
}

// Every page of the org's orders, either way and at any depth, is one range of orders_keyset read
// in order; a client's orders are one range of orders_client.
func TestBrowsingReadsAnIndexRange(t *testing.T) {
	db := pgtest.New(t)
	orgs := seed(t, db, 50000)
	client := uuid.New()
	var store uuid.UUID
	db.Raw("SELECT id FROM stores WHERE org_id = ?", orgs[2]).Scan(&store)
	db.Exec("INSERT INTO clients (id, org_id, store_id, email) VALUES (?, ?, ?, 'c@example.test')", client, orgs[2], store)
	db.Exec("UPDATE orders SET client_id = ? WHERE org_id = ? AND number % 10 = 0", client, orgs[2])
	db.Exec("ANALYZE")
	deep := &paging.Cursor{At: time.Now().Add(-40000 * time.Second), ID: uuid.New()}
	for _, c := range []struct {
		cur   *paging.Cursor
		newer bool
	}{{nil, false}, {deep, false}, {deep, true}} {
		what := fmt.Sprintf("deep=%v newer=%v", c.cur != nil, c.newer)
		q := BrowseQuery{OrgID: orgs[2], Cursor: c.cur, Newer: c.newer, Limit: 50}
		sql, args := browseSQL(q, []string{"b.org_id = ?"}, [][]any{{q.OrgID}})
		pgtest.CheckKeysetScan(t, db, what, "orders", "orders_keyset", sql, args...)
		sql, args = browseSQL(q, []string{"b.client_id = ? AND b.org_id = ?"}, [][]any{{client, q.OrgID}})
		pgtest.CheckKeysetScan(t, db, what+" by client", "orders", "orders_client", sql, args...)
	}
}
