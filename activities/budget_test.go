package activities

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The large-body budget is a bound: once it is spent, the next load waits until room is given back.
func TestTheLargeBodyBudgetBoundsWhatIsLoadedAtOnce(t *testing.T) {
	a := &Activities{}
	release, err := a.reserve(context.Background(), DefaultLargeBodyBudget-MaxBody+1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := a.reserve(ctx, MaxBody); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a 6 MB load with less than 6 MB of room left: %v, want it to wait", err)
	}
	release()
	again, err := a.reserve(context.Background(), MaxBody)
	if err != nil {
		t.Fatal(err)
	}
	again()
}
