package api

import (
	"errors"
	"net/http"
	"testing"

	"wds/problem"
)

// TestErrorTableRows holds the two rules the table relies on: every row's error belongs to a category
// (which gives its status), and a category's own row follows every row of its errors, since
// errors.Is matches a category for each error in it.
func TestErrorTableRows(t *testing.T) {
	for i, row := range errorTable {
		if problem.Status(row.err) == http.StatusInternalServerError {
			t.Errorf("%s: %q belongs to no problem category", row.code, row.err)
		}
		var c *problem.Category
		if !errors.As(row.err, &c) || error(c) != row.err {
			continue
		}
		for _, later := range errorTable[i+1:] {
			if errors.Is(later.err, c) {
				t.Errorf("%s: comes after the row of its category (%s), which answers first", later.code, row.code)
			}
		}
	}
}
