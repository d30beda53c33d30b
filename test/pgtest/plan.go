package pgtest

import (
	"encoding/json"
	"strings"
	"testing"

	"gorm.io/gorm"
)

// PlanNode is the part of an EXPLAIN (FORMAT JSON) node that plan tests read; the counts are
// EXPLAIN ANALYZE's, zero without it.
type PlanNode struct {
	NodeType         string     `json:"Node Type"`
	Relation         string     `json:"Relation Name"`
	Index            string     `json:"Index Name"`
	IndexCond        string     `json:"Index Cond"`
	PlanRows         float64    `json:"Plan Rows"`
	ActualRows       int64      `json:"Actual Rows"`
	ActualLoops      int64      `json:"Actual Loops"`
	RemovedByFilter  int64      `json:"Rows Removed by Filter"`
	RemovedByRecheck int64      `json:"Rows Removed by Index Recheck"`
	Plans            []PlanNode `json:"Plans"`
}

// Walk calls f on n and every node under it, parents first.
func (n PlanNode) Walk(f func(PlanNode)) {
	f(n)
	for _, c := range n.Plans {
		c.Walk(f)
	}
}

// Reads reports whether n or a node under it reads the relation rel.
func (n PlanNode) Reads(rel string) bool {
	found := false
	n.Walk(func(c PlanNode) { found = found || c.Relation == rel })
	return found
}

// Explain returns the plan PostgreSQL makes for sql, and the plan's JSON for failure messages.
func Explain(t testing.TB, db *gorm.DB, sql string, args ...any) (PlanNode, string) {
	t.Helper()
	return explain(t, db, "EXPLAIN (FORMAT JSON) ", sql, args...)
}

// ExplainAnalyze runs sql and returns its plan with the rows each node actually read, and the plan's
// JSON for failure messages.
func ExplainAnalyze(t testing.TB, db *gorm.DB, sql string, args ...any) (PlanNode, string) {
	t.Helper()
	return explain(t, db, "EXPLAIN (ANALYZE, FORMAT JSON) ", sql, args...)
}

func explain(t testing.TB, db *gorm.DB, explain, sql string, args ...any) (PlanNode, string) {
	t.Helper()
	var rows []string
	if err := db.Raw(explain+sql, args...).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	text := strings.Join(rows, "")
	var top []struct{ Plan PlanNode }
	if err := json.Unmarshal([]byte(text), &top); err != nil || len(top) != 1 {
		t.Fatalf("plan is not JSON: %v %s", err, text)
	}
	return top[0].Plan, text
}

// CheckKeysetScan fails t (naming the case what) unless the plan of sql reads table through index
// scans (or index-only scans) only, uses index, and sorts nothing: a keyset page that costs the same
// at any depth.
func CheckKeysetScan(t testing.TB, db *gorm.DB, what, table, index, sql string, args ...any) {
	t.Helper()
	root, text := Explain(t, db, sql, args...)
	usedIndex := false
	root.Walk(func(n PlanNode) {
		if n.NodeType == "Sort" || n.NodeType == "Incremental Sort" {
			t.Errorf("%s: plan has a sort step:\n%s", what, text)
		}
		if n.Relation == table && n.NodeType != "Index Scan" && n.NodeType != "Index Only Scan" {
			t.Errorf("%s: %s reads %s, want an index scan:\n%s", what, n.NodeType, table, text)
		}
		usedIndex = usedIndex || n.Index == index
	})
	if !usedIndex {
		t.Errorf("%s: plan does not use %s:\n%s", what, index, text)
	}
}

// ReadsByOnly reports whether n reads its relation through index alone and throws nothing away: an
// index scan of it, or a bitmap heap scan over that one index. The planner may pick either for a rare
// key, and both read only the key's entries.
func (n PlanNode) ReadsByOnly(index string) bool {
	if n.RemovedByFilter != 0 || n.RemovedByRecheck != 0 {
		return false
	}
	if n.NodeType == "Bitmap Heap Scan" {
		return len(n.Plans) == 1 && n.Plans[0].NodeType == "Bitmap Index Scan" && n.Plans[0].Index == index
	}
	return n.Index == index
}

// BlocksRead is how many blocks PostgreSQL touched running sql on db (EXPLAIN ANALYZE's buffers):
// what a query costs, whatever plan it took.
func BlocksRead(t testing.TB, db *gorm.DB, sql string, args ...any) int {
	t.Helper()
	var out []string
	if err := db.Raw("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+sql, args...).Scan(&out).Error; err != nil {
		t.Fatal(err)
	}
	var plans []struct {
		Plan struct {
			Hit  int `json:"Shared Hit Blocks"`
			Read int `json:"Shared Read Blocks"`
		}
	}
	if err := json.Unmarshal([]byte(strings.Join(out, "")), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN output: %v %s", err, out)
	}
	return plans[0].Plan.Hit + plans[0].Plan.Read
}
