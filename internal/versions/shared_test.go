package versions

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// reads counts the reads that reach it and answers with its count as the deployment's name.
type reads struct {
	n    atomic.Int32
	fail error
	wait time.Duration
}

func (r *reads) List(ctx context.Context) (Deployment, error) {
	n := r.n.Add(1)
	time.Sleep(r.wait)
	if r.fail != nil {
		return Deployment{}, r.fail
	}
	if err := ctx.Err(); err != nil {
		return Deployment{}, err
	}
	return Deployment{Name: string(rune('0' + n))}, nil
}

// Overviews asking at once, and again within SharedFor, cost one read; the next read comes once the
// last is SharedFor old.
func TestOverviewsShareOneReadOfTheDeployment(t *testing.T) {
	src := &reads{wait: 50 * time.Millisecond}
	now := time.Now()
	s := &Shared{Source: src, now: func() time.Time { return now }}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d, err := s.List(context.Background()); err != nil || d.Name != "1" {
				t.Errorf("a concurrent overview read %q, %v; want the one read's answer", d.Name, err)
			}
		}()
	}
	wg.Wait()
	now = now.Add(SharedFor - time.Millisecond)
	if d, _ := s.List(context.Background()); d.Name != "1" || src.n.Load() != 1 {
		t.Fatalf("within SharedFor: %q after %d reads, want the first read's answer after 1", d.Name, src.n.Load())
	}
	now = now.Add(time.Millisecond)
	if d, _ := s.List(context.Background()); d.Name != "2" || src.n.Load() != 2 {
		t.Fatalf("at SharedFor: %q after %d reads, want a second read", d.Name, src.n.Load())
	}
}

// A failed read is kept like an answer, so a Temporal that is down or slow is not asked by every
// page; a read its caller cancelled is not, and the next overview reads again.
func TestAFailedReadIsSharedButACancelledOneIsNot(t *testing.T) {
	down := errors.New("temporal unavailable")
	src := &reads{fail: down}
	now := time.Now()
	s := &Shared{Source: src, now: func() time.Time { return now }}
	for range 3 {
		if _, err := s.List(context.Background()); !errors.Is(err, down) {
			t.Fatalf("got %v, want the failed read's error", err)
		}
	}
	if src.n.Load() != 1 {
		t.Fatalf("%d reads of a Temporal that failed, want 1 within SharedFor", src.n.Load())
	}

	src = &reads{}
	s = &Shared{Source: src, now: func() time.Time { return now }}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.List(gone); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled caller got %v", err)
	}
	if d, err := s.List(context.Background()); err != nil || d.Name != "2" {
		t.Fatalf("after a cancelled read: %q, %v; want a fresh read", d.Name, err)
	}
}
