package api

import (
	"errors"
	"net/http"
	"testing"

	"wds/delivery"
	"wds/ingest"
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

// TestJoinedErrorsAnswerOneRow: an error that joins two domain errors of different categories answers
// with the status and code of one row, never the status of one and the code of the other.
func TestJoinedErrorsAnswerOneRow(t *testing.T) {
	for _, err := range []error{
		errors.Join(delivery.ErrHTTPSRequired, ingest.ErrOrderNotPayable),
		errors.Join(ingest.ErrOrderNotPayable, delivery.ErrHTTPSRequired),
	} {
		status, code, _ := Answer(err)
		if !(status == http.StatusConflict && code == "order_not_payable") &&
			!(status == http.StatusUnprocessableEntity && code == "https_required") {
			t.Errorf("Answer(%q) = %d %s: status and code of different rows", err, status, code)
		}
	}
}
