package views

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/paging"
	"wds/pgtest"
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

// plan returns the JSON plan of the page query a list would run.
func plan(t *testing.T, db *gorm.DB, sel string, q ListQuery) string {
	t.Helper()
	tail, args := Keyset(q, "t.org_id", "t.store_id")
	var rows []string
	if err := db.Raw("EXPLAIN (FORMAT JSON) "+sel+tail, args...).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return strings.Join(rows, "")
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
			p := plan(t, db, c.sel, ListQuery{Scope: Scope{OrgID: orgs[2]}, Cursor: cur, Limit: 50})
			var top []struct{ Plan node }
			if err := json.Unmarshal([]byte(p), &top); err != nil || len(top) != 1 {
				t.Fatalf("%s: plan is not JSON: %v %s", c.table, err, p)
			}
			var usedIndex bool
			top[0].Plan.walk(func(n node) {
				if n.NodeType == "Sort" || n.NodeType == "Incremental Sort" {
					t.Errorf("%s (deep=%v): plan has a sort step:\n%s", c.table, cur != nil, p)
				}
				if n.Relation == c.table && n.NodeType != "Index Scan" {
					t.Errorf("%s (deep=%v): %s reads the table, want an index scan:\n%s", c.table, cur != nil, n.NodeType, p)
				}
				usedIndex = usedIndex || n.Index == c.index
			})
			if !usedIndex {
				t.Errorf("%s: plan does not use %s:\n%s", c.table, c.index, p)
			}
		}
	}
}

// node is the part of an EXPLAIN (FORMAT JSON) node the test reads.
type node struct {
	NodeType string `json:"Node Type"`
	Relation string `json:"Relation Name"`
	Index    string `json:"Index Name"`
	Plans    []node `json:"Plans"`
}

func (n node) walk(f func(node)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}
