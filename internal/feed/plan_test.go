package feed_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/feed"
	"wds/test/pgtest"
)

// A page reads its own rows and no others, through the feed's indexes, at the start and deep in an
// org's history of 200,000 events beside another org's 100,000, with and without filters; and so
// does a page of an org the table's statistics do not know yet, of a type they do not know either.
func TestAPageReadsOnlyItsRows(t *testing.T) {
	e := newEnv(t)
	other, otherStore, _ := mustOrg(t, e.db)
	types := "ARRAY['order.created','order.shipped','payment.recorded','client.created','vendor.updated']"
	fill := func(org, store, store2 uuid.UUID, n int) {
		err := e.db.Exec(`INSERT INTO events (id, org_id, store_id, type, body, created_at, dispatched_at)
			SELECT gen_random_uuid(), ?, CASE WHEN i % 3 = 0 THEN ?::uuid WHEN i % 3 = 1 THEN ?::uuid END,
				(`+types+`)[1 + i % 5], '{"data":{}}', now() - (? - i) * interval '1 millisecond', now()
			FROM generate_series(1, ?) AS i`, org, store, store2, n, n).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	fill(e.org, e.store, e.store2, 200_000)
	fill(other, otherStore, otherStore, 100_000)
	if err := e.db.Exec(`ANALYZE events`).Error; err != nil {
		t.Fatal(err)
	}
	var deep struct {
		Xact      string
		CreatedAt time.Time
		ID        uuid.UUID
	}
	if err := e.db.Raw(`SELECT xact_id::text AS xact, created_at, id FROM events WHERE org_id = ?
		ORDER BY xact_id, created_at, id OFFSET 150000 LIMIT 1`, e.org).Scan(&deep).Error; err != nil {
		t.Fatal(err)
	}
	x, _ := strconv.ParseUint(deep.Xact, 10, 64)
	deepAt := feed.Iterator(x, deep.CreatedAt, deep.ID)
	for _, c := range []struct {
		name  string
		q     feed.Query
		index string
	}{
		{"every type", feed.Query{}, "events_feed"},
		{"one type", feed.Query{Types: []string{events.OrderShipped}}, "events_feed"},
		{"two types", feed.Query{Types: []string{events.ClientCreated, events.OrderCreated}}, "events_feed"},
		{"a store", feed.Query{StoreID: &e.store2}, "events_feed_store"},
		{"a store and a type", feed.Query{StoreID: &e.store, Types: []string{events.PaymentRecorded}}, "events_feed_store"},
	} {
		for _, after := range []string{"", deepAt} {
			c.q.OrgID, c.q.Limit = e.org, 100
			sql, args, err := feed.PageSQL(c.q, after)
			if err != nil {
				t.Fatal(err)
			}
			checkPageReadsItsRows(t, e.db, c.name+map[bool]string{true: " at the start", false: " deep"}[after == ""], c.index, c.q, sql, args)
		}
	}
	// The planner knows neither the fresh org nor its type: its page gets the plan of the org it
	// knows, estimates and all, and so reads its own rows too.
	fresh, freshStore := freshOrg(t, e.db)
	for _, c := range []struct {
		name         string
		known, fresh feed.Query
		index        string
	}{
		{"a fresh org", feed.Query{OrgID: e.org}, feed.Query{OrgID: fresh}, "events_feed"},
		{"a fresh org's new type", feed.Query{OrgID: e.org, Types: []string{events.OrderShipped}},
			feed.Query{OrgID: fresh, Types: []string{events.VendorClaimed}}, "events_feed"},
		{"a fresh org's store", feed.Query{OrgID: e.org, StoreID: &e.store}, feed.Query{OrgID: fresh, StoreID: &freshStore}, "events_feed_store"},
	} {
		c.known.Limit, c.fresh.Limit = 100, 100
		known, _ := explainPage(t, e.db, c.known)
		got, text := explainPage(t, e.db, c.fresh)
		if want := planShape(known); planShape(got) != want {
			t.Errorf("%s: planned as\n%s\nwant the known org's plan\n%s\n%s", c.name, planShape(got), want, text)
		}
		sql, args, err := feed.PageSQL(c.fresh, "")
		if err != nil {
			t.Fatal(err)
		}
		checkPageReadsItsRows(t, e.db, c.name, c.index, c.fresh, sql, args)
	}
	// A start from since finds its position in one row of the org's index, deep in its history.
	plan, text := pgtest.ExplainAnalyze(t, e.db, feed.SinceSQL, e.org, deep.CreatedAt)
	var read int64
	plan.Walk(func(n pgtest.PlanNode) {
		if n.Relation != "events" {
			return
		}
		if !n.ReadsByOnly("events_org") {
			t.Errorf("since: reads events by %s %q, removing %d rows by filter; want events_org and no filter:\n%s", n.NodeType, n.Index, n.RemovedByFilter, text)
		}
		read += n.ActualRows * max(n.ActualLoops, 1)
	})
	if read != 1 {
		t.Errorf("since: read %d events, want 1:\n%s", read, text)
	}
}

func explainPage(t *testing.T, db *gorm.DB, q feed.Query) (pgtest.PlanNode, string) {
	t.Helper()
	sql, args, err := feed.PageSQL(q, "")
	if err != nil {
		t.Fatal(err)
	}
	return pgtest.Explain(t, db, sql, args...)
}

// planShape is a plan's nodes, each with its index and estimated rows, a line each.
func planShape(plan pgtest.PlanNode) string {
	var b strings.Builder
	plan.Walk(func(n pgtest.PlanNode) {
		fmt.Fprintf(&b, "%s %s %s rows=%.0f\n", n.NodeType, n.Relation, n.Index, n.PlanRows)
	})
	return b.String()
}

func checkPageReadsItsRows(t *testing.T, db *gorm.DB, what, index string, q feed.Query, sql string, args []any) {
	t.Helper()
	plan, text := pgtest.ExplainAnalyze(t, db, sql, args...)
	branches := len(q.Types)
	if branches == 0 {
		branches = len(events.Types()) - 1
	}
	var read int64
	plan.Walk(func(n pgtest.PlanNode) {
		if n.Relation != "events" {
			return
		}
		if !n.ReadsByOnly(index) {
			t.Errorf("%s: reads events by %s %q, removing %d rows by filter; want %s and no filter:\n%s", what, n.NodeType, n.Index, n.RemovedByFilter, index, text)
		}
		read += n.ActualRows * max(n.ActualLoops, 1)
	})
	t.Logf("%s: %d events read", what, read)
	if limit := int64(q.Limit + 1 + branches); read == 0 || read > limit {
		t.Errorf("%s: the page read %d events, want 1 to %d (its rows, one more, and one a type):\n%s", what, read, limit, text)
	}
}

// freshOrg is an org whose 8,000 events, in 2,000 transactions as creates write them, were written
// after the table was last analyzed, a quarter of them of a type no other org has.
func freshOrg(t *testing.T, db *gorm.DB) (org, store uuid.UUID) {
	t.Helper()
	org, store, _ = mustOrg(t, db)
	err := db.Exec(`DO $$ BEGIN FOR k IN 1..2000 LOOP
		INSERT INTO events (id, org_id, store_id, type, body, created_at, dispatched_at)
			SELECT gen_random_uuid(), '` + org.String() + `', '` + store.String() + `',
				(ARRAY['order.created','payment.recorded','client.created','` + events.VendorClaimed + `'])[i], '{"data":{}}', clock_timestamp(), now()
			FROM generate_series(1, 4) AS i;
		COMMIT; END LOOP; END $$`).Error
	if err != nil {
		t.Fatal(err)
	}
	return org, store
}
