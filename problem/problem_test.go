package problem_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"wds/problem"
)

var errGone = problem.New(problem.Conflict, "the thing is gone")

func TestDomainErrorUnwrapsToItsCategory(t *testing.T) {
	err := fmt.Errorf("context: %w", problem.Fail(errGone, "thing %d is gone", 7))
	if !errors.Is(err, errGone) || !errors.Is(err, problem.Conflict) || errors.Is(err, problem.NotFound) {
		t.Fatalf("errors.Is on %v: want errGone and Conflict only", err)
	}
	if got := problem.Status(err); got != http.StatusConflict {
		t.Errorf("Status = %d, want 409", got)
	}
	if got := problem.Detail(err); got != "thing 7 is gone" {
		t.Errorf("Detail = %q", got)
	}
	if got := problem.Detail(errGone); got != "the thing is gone" {
		t.Errorf("Detail(bare) = %q", got)
	}
}

func TestCategoryIsAnErrorItself(t *testing.T) {
	err := problem.Fail(problem.NotFound, "order %s not found", "x")
	if !errors.Is(err, problem.NotFound) || problem.Status(err) != http.StatusNotFound || problem.Detail(err) != "order x not found" {
		t.Fatalf("%v: want a 404 NotFound with its detail", err)
	}
	if got := problem.Status(errors.New("plain")); got != http.StatusInternalServerError {
		t.Errorf("Status(uncategorised) = %d, want 500", got)
	}
}
