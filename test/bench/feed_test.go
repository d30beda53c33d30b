package bench

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestFeedPgbenchPage: every placeholder of the captured page becomes a pgbench variable, $10 and
// up included, the position's three by the names given in every branch, the rest constants.
func TestFeedPgbenchPage(t *testing.T) {
	pos := feedPosition{xact: 42, at: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), id: uuid.New()}
	org := uuid.New()
	st := feedStatement{sql: "SELECT $1, $2 WHERE a = $3 AND b = $4 AND (x, t, i) > ($5, $6, $7) OR b = $8 AND (x, t, i) > ($9, $10, $11) LIMIT $12",
		vars: []any{6000000, "order.created", org, "order.created", "42", pos.at, pos.id, "payment.recorded", "42", pos.at, pos.id, 51}}
	sql, defs, err := st.pgbenchPage(pos, [3]string{"x", "t", "i"})
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT :c1, :c2 WHERE a = :c3 AND b = :c4 AND (x, t, i) > (:x, :t, :i) OR b = :c8 AND (x, t, i) > (:x, :t, :i) LIMIT :c12"
	if sql != want {
		t.Errorf("sql\n%s\nwant\n%s", sql, want)
	}
	if defs["c1"] != "6000000" || defs["c3"] != org.String() || defs["c8"] != "payment.recorded" || defs["c12"] != "51" || len(defs) != 6 {
		t.Errorf("defs %v", defs)
	}
	st.vars[8] = "43" // a branch whose position is not the page's
	if _, _, err := st.pgbenchPage(pos, [3]string{"x", "t", "i"}); err == nil {
		t.Error("a branch without the position passed")
	}
}
