package ratelimit

import (
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLimitWithinOneWindow(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := New(c.now)
	for i := 0; i < 600; i++ {
		if !l.Allow("k", 600) {
			t.Fatalf("request %d refused", i+1)
		}
	}
	if l.Allow("k", 600) {
		t.Fatal("601st request allowed")
	}
	if !l.Allow("other", 600) {
		t.Fatal("keys must be independent")
	}
}

func TestWindowSlides(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)}
	l := New(c.now)
	for i := 0; i < 10; i++ {
		l.Allow("k", 10)
	}
	// Half-way through the next minute, half of the previous minute still counts: 5 of 10 used.
	c.t = c.t.Add(60 * time.Second)
	allowed := 0
	for i := 0; i < 10; i++ {
		if l.Allow("k", 10) {
			allowed++
		}
	}
	if allowed != 5 {
		t.Fatalf("allowed %d after sliding half a window, want 5", allowed)
	}
	// Two windows later everything is forgotten.
	c.t = c.t.Add(2 * Window)
	if !l.Allow("k", 1) {
		t.Fatal("budget not restored after idle windows")
	}
}

func TestRejectedRequestsDoNotCount(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := New(c.now)
	l.Allow("k", 1)
	for i := 0; i < 100; i++ {
		l.Allow("k", 1)
	}
	c.t = c.t.Add(2 * Window)
	if !l.Allow("k", 1) {
		t.Fatal("refused requests were counted")
	}
}

// Exhausted reads the window without counting: asking never uses up the budget, and it says so
// exactly when Allow would refuse.
func TestExhaustedDoesNotCount(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := New(c.now)
	for i := range 3 {
		for range 5 {
			if l.Exhausted("k", 3) {
				t.Fatalf("exhausted after %d of 3", i)
			}
		}
		l.Allow("k", 3)
	}
	if !l.Exhausted("k", 3) || l.Allow("k", 3) {
		t.Fatal("3 of 3 used: Exhausted must say so and Allow refuse")
	}
	c.t = c.t.Add(2 * Window)
	if l.Exhausted("k", 3) {
		t.Fatal("still exhausted two windows later")
	}
}
