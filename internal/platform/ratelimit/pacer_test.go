package ratelimit

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A key gets its burst at once, then one turn every 1/rate, each caller told how long to wait; a
// turn further off than maxWait is refused and not taken; another key is not held up at all; an idle
// key is forgotten.
func TestPacerSpacesEachKeysTurns(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := NewPacer(10, 300*time.Millisecond, func() time.Time { return now })
	for i := range 10 {
		if wait, ok := p.Delay("a"); !ok || wait != 0 {
			t.Fatalf("call %d of the burst: wait %s, ok %v", i+1, wait, ok)
		}
	}
	for i, want := range []time.Duration{100, 200, 300} {
		if wait, ok := p.Delay("a"); !ok || wait != want*time.Millisecond {
			t.Fatalf("call %d past the burst: wait %s, ok %v; want %dms", i+11, wait, ok, want)
		}
	}
	if wait, ok := p.Delay("a"); ok {
		t.Fatalf("a turn 400ms off was given (wait %s), want refused past maxWait", wait)
	}
	if wait, ok := p.Delay("b"); !ok || wait != 0 {
		t.Fatalf("another key waited %s (ok %v)", wait, ok)
	}
	now = now.Add(100 * time.Millisecond) // the refused turn was not taken: the next is 300ms off again
	if wait, ok := p.Delay("a"); !ok || wait != 300*time.Millisecond {
		t.Fatalf("after 100ms: wait %s, ok %v; want 300ms", wait, ok)
	}
	now = now.Add(2 * Window)
	p.Delay("b")
	if _, kept := p.keys["a"]; kept {
		t.Fatal("a key idle for two windows is still kept")
	}
}

// Wait waits out the delay, refuses with ErrExceeded past maxWait, and gives up when ctx ends.
func TestPacerWait(t *testing.T) {
	p := NewPacer(20, 100*time.Millisecond, nil)
	ctx := context.Background()
	start := time.Now()
	for range 22 {
		done, err := p.Wait(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		done()
	}
	if took := time.Since(start); took < 80*time.Millisecond || took > time.Second {
		t.Fatalf("22 calls at 20 a second with a burst of 20 took %s, want about 100ms", took)
	}
	p.Delay("k") // two turns taken by callers still waiting: 50 and 100ms off
	p.Delay("k")
	if _, err := p.Wait(ctx, "k"); !errors.Is(err, ErrExceeded) {
		t.Fatalf("a turn past maxWait: %v, want ErrExceeded", err)
	}
	slow := NewPacer(1, time.Hour, nil)
	if done, err := slow.Wait(ctx, "k"); err == nil {
		done()
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := slow.Wait(cctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting past the caller's deadline: %v", err)
	}
	// The turn the caller gave up is given back: the next is a second off again, not two.
	if wait, ok := slow.Delay("k"); !ok || wait > 1100*time.Millisecond {
		t.Fatalf("after a caller gave up its turn the next is %s off (ok %v), want about 1s", wait, ok)
	}
}

// One of a key's calls runs at a time: a second call, its turn come, waits for the first to end,
// and gives up with ErrExceeded when the first outlasts maxWait; another key's call runs meanwhile.
func TestPacerRunsOneCallOfAKeyAtATime(t *testing.T) {
	p := NewPacer(100, 200*time.Millisecond, nil)
	ctx := context.Background()
	first, err := p.Wait(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	other, err := p.Wait(ctx, "other")
	if err != nil {
		t.Fatalf("another key: %v", err)
	}
	other()
	go func() { time.Sleep(50 * time.Millisecond); first() }()
	start := time.Now()
	second, err := p.Wait(ctx, "k")
	if took := time.Since(start); err != nil || took < 40*time.Millisecond {
		t.Fatalf("the second call ran after %s (%v), want after the first ended at 50ms", took, err)
	}
	if _, err := p.Wait(ctx, "k"); !errors.Is(err, ErrExceeded) {
		t.Fatalf("a call behind one that outlasts maxWait: %v, want ErrExceeded", err)
	}
	second()
}
