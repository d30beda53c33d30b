package deliverytest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"wds/internal/platform/problem"
)

// CheckPacedApart runs twenty of an org's calls at once against a pacer of ten a second with half a
// second of queue, then, 50 ms in, another org's call: fifteen of the org's answer (the last after
// its turn at 500 ms), five are refused as rate_limited, and the other org's answers at once. Calls
// that check the caller's role in the database before they ask for a turn (the reads) reach the pacer
// a little apart, and on a slow run far enough apart that the pace lets more through (together is
// false): for them what holds is the pace itself, no more than ten answers at once and ten a second
// after that, and another org's answer at once.
func CheckPacedApart(t *testing.T, together bool, call func(i int) error, otherOrg func() error) {
	t.Helper()
	start := time.Now()
	var mu sync.Mutex
	var answered, refused int
	var last time.Duration
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			err := call(i)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				answered++
				last = max(last, time.Since(start))
			case errors.Is(err, problem.RateLimited):
				refused++
			default:
				t.Error(err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	began := time.Now()
	if err := otherOrg(); err != nil {
		t.Fatal(err)
	}
	otherTook := time.Since(began)
	wg.Wait()
	// Ten turns at once and five more within the queue: fifteen answer, unless a busy machine made the
	// org's calls, which run one at a time, outlast the queue, and more are refused. Never fewer.
	if answered+refused != 20 || answered < 10 || (together && refused < 5) {
		t.Fatalf("%d answered, %d refused; want 15 and 5 (more refused only on a busy machine)", answered, refused)
	}
	if turn := time.Duration(answered-10) * 100 * time.Millisecond; last < turn-50*time.Millisecond {
		t.Fatalf("the org's last call answered after %s, before its turn at %s", last, turn)
	}
	if otherTook > 400*time.Millisecond {
		t.Fatalf("another org's call took %s while the first org's waited their turns", otherTook)
	}
}
