package api

import (
	"errors"
	"net/http"
	"testing"

	"wds/internal/endpoints"
	"wds/internal/ingest"
	"wds/internal/platform/answer"
	"wds/internal/platform/problem"
)

// TestDeclaredErrorsHaveOneCodeEach holds the rules answers rely on now that each error carries its
// code: every declared error belongs to a category with a status, and no two errors (nor a category
// answering itself) share a code, so a code names one error wherever it was declared.
//
// One code is the contract's for two errors: invalid_parameter answers a malformed query parameter
// with 400 (docs/read-api.md) and a support-desk parameter the service refuses with 422
// (docs/support.md#reference).
func TestDeclaredErrorsHaveOneCodeEach(t *testing.T) {
	shared := map[string]bool{"invalid_parameter": true}
	seen := map[string]error{}
	for _, err := range append(problem.Declared(), problem.NotFound, problem.Conflict, problem.Invalid) {
		c, code, ok := problem.Classify(err)
		if !ok || answer.Status(c) == http.StatusInternalServerError {
			t.Errorf("%q belongs to no category with a status", err)
		}
		if other, dup := seen[code]; dup && !shared[code] {
			t.Errorf("%q and %q share the code %s", other, err, code)
		}
		seen[code] = err
	}
}

// TestJoinedErrorsAnswerOneRow: an error that joins two domain errors of different categories answers
// with the status and code of one of them, never the status of one and the code of the other.
func TestJoinedErrorsAnswerOneRow(t *testing.T) {
	for _, err := range []error{
		errors.Join(endpoints.ErrHTTPSRequired, ingest.ErrOrderNotPayable),
		errors.Join(ingest.ErrOrderNotPayable, endpoints.ErrHTTPSRequired),
	} {
		status, code, _ := answer.Of(err)
		if !(status == http.StatusConflict && code == "order_not_payable") &&
			!(status == http.StatusUnprocessableEntity && code == "https_required") {
			t.Errorf("answer.Of(%q) = %d %s: status and code of different errors", err, status, code)
		}
	}
}
