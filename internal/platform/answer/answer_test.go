package answer_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"wds/internal/platform/answer"
	"wds/internal/platform/database"
	"wds/internal/platform/problem"
)

// Each category has its status, and an error answers with its category's status, its own code and
// its detail however deeply it is wrapped.
func TestAnErrorAnswersWithItsCategorysStatusAndItsCode(t *testing.T) {
	statuses := map[*problem.Category]int{
		problem.BadRequest: 400, problem.Unauthorized: 401, problem.Forbidden: 403, problem.NotFound: 404,
		problem.Conflict: 409, problem.TooLarge: 413, problem.Invalid: 422, problem.RateLimited: 429,
		problem.Unavailable: 503,
	}
	for c, want := range statuses {
		if got := answer.Status(c); got != want {
			t.Errorf("Status(%q) = %d, want %d", c, got, want)
		}
		err := fmt.Errorf("outer: %w", problem.Fail(problem.New(c, "some_code", "text"), "why"))
		if status, code, detail := answer.Of(err); status != want || code != "some_code" || detail != "why" {
			t.Errorf("Of(%q) = %d %s %q", err, status, code, detail)
		}
	}
}

// A database that could not do the work answers 503 whatever the error also says; an error of no
// category is internal, its text kept from the APIs' answer but shown by the CLI.
func TestUnavailableAndInternal(t *testing.T) {
	busy := errors.Join(problem.Fail(problem.NotFound, "gone"), database.ErrBusy)
	if status, code, _ := answer.Of(busy); status != http.StatusServiceUnavailable || code != answer.CodeUnavailable {
		t.Errorf("Of(busy) = %d %s", status, code)
	}
	odd := errors.New("disk on fire")
	if status, code, detail := answer.Of(odd); status != 500 || code != answer.CodeInternal || detail == odd.Error() {
		t.Errorf("Of(odd) = %d %s %q", status, code, detail)
	}
	if code, detail := answer.Code(odd); code != answer.CodeInternal || detail != odd.Error() {
		t.Errorf("Code(odd) = %s %q", code, detail)
	}
}
