package bench

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// settle waits while a part's process has ended and is not reaped yet, whose CPU a snapshot could
// miss, and returns soon after the reap.
func TestSettleWaitsForTheReap(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !exiting(cmd.Process.Pid); {
		if time.Now().After(deadline) {
			t.Fatal("the child never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	m := &cpuMeter{parts: map[string]func() []int{"children": func() []int { return childrenOf(os.Getpid()) }}}
	start := time.Now()
	done := make(chan time.Duration)
	go func() { m.settle(); done <- time.Since(start) }()
	const reapAfter = 300 * time.Millisecond
	time.Sleep(reapAfter)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if took := <-done; took < reapAfter || took > reapAfter+time.Second {
		t.Fatalf("settle returned after %s; the child was reaped after %s", took, reapAfter)
	}
}
