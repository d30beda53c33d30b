package problem_test

import (
	"errors"
	"fmt"
	"testing"

	"wds/internal/platform/problem"
)

var errGone = problem.New(problem.Conflict, "gone", "the thing is gone")

func TestDomainErrorUnwrapsToItsCategory(t *testing.T) {
	err := fmt.Errorf("context: %w", problem.Fail(errGone, "thing %d is gone", 7))
	if !errors.Is(err, errGone) || !errors.Is(err, problem.Conflict) || errors.Is(err, problem.NotFound) {
		t.Fatalf("errors.Is on %v: want errGone and Conflict only", err)
	}
	if c, code, ok := problem.Classify(err); !ok || c != problem.Conflict || code != "gone" {
		t.Errorf("Classify = %v %q %v, want Conflict gone", c, code, ok)
	}
	if got := problem.Detail(err); got != "thing 7 is gone" {
		t.Errorf("Detail = %q", got)
	}
	if got := problem.Detail(errGone); got != "the thing is gone" {
		t.Errorf("Detail(bare) = %q", got)
	}
	if d := problem.Declared(); len(d) != 1 || d[0] != errGone {
		t.Errorf("Declared = %v, want errGone alone", d)
	}
}

func TestCategoryIsAnErrorItself(t *testing.T) {
	err := problem.Fail(problem.NotFound, "order %s not found", "x")
	if c, code, ok := problem.Classify(err); !errors.Is(err, problem.NotFound) || !ok || c != problem.NotFound ||
		code != "not_found" || problem.Detail(err) != "order x not found" {
		t.Fatalf("%v: want NotFound, not_found, with its detail", err)
	}
	if _, _, ok := problem.Classify(errors.New("plain")); ok {
		t.Error("Classify(uncategorised) is ok, want a defect")
	}
	if _, _, ok := problem.Classify(problem.Fail(problem.BadRequest, "bare")); ok {
		t.Error("Classify(BadRequest returned itself) is ok: that category has no code of its own")
	}
}
