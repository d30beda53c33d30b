package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"wds/internal/delivery"
)

// TestNoisySmoke runs the noisy-neighbour line on a small outage (20,000 rows, 4,000 dropped chains,
// 400 of them recovered, at the org's default budget of 10 a second): every recovered chain must have been re-fired, delivered and received
// exactly once, and B's and A's loads must have run without errors. B's ratios and the batch times
// are for `make bench` to judge on a quiet machine, not for a test on a shared one.
func TestNoisySmoke(t *testing.T) {
	o := Smoke()
	o.Log, o.Parts = t.Output(), []string{"noisy"}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	n := res.Noisy
	if n == nil {
		t.Fatal("no noisy-neighbour results")
	}
	if rc := n.Recovery; !rc.ExactlyOnce || rc.Chains != o.Noisy.Recover {
		t.Errorf("recovery not exactly once: %+v", rc)
	}
	for name, side := range map[string]NoisySide{"quiet": n.Quiet, "noisy": n.Noisy, "quiet after": n.QuietAfter} {
		c, p := side.Creates, side.Pages
		if c.Sent == 0 || c.Errors != 0 || c.Delivered != c.Sent || c.P99Ms <= 0 || p.Ops == 0 || p.Errors != 0 || p.P99Ms <= 0 {
			t.Errorf("B %s: creates %+v, pages %+v", name, c, p)
		}
		// Every create and page took turns at serve's gate, and the sampler saw the database.
		w := side.Waits
		if g := w.Gate["serve"]; g.Turns < float64(c.Sent+p.Ops) || g.MeanWaitMs < 0 || w.Samples == 0 {
			t.Errorf("B %s: waits %+v", name, w)
		}
	}
	if n.CreateRatio <= 0 || n.PageRatio <= 0 || n.ReceiptRatio <= 0 {
		t.Errorf("ratios: create %v, page %v, order to receipt %v", n.CreateRatio, n.PageRatio, n.ReceiptRatio)
	}
	if n.Search.Ops == 0 || n.Search.Errors != 0 {
		t.Errorf("A's searches: %+v", n.Search)
	}
	if n.Member.Ops == 0 || n.Member.Errors != 0 || int64(n.Member.Ops) <= n.MemberPaced {
		t.Errorf("A's members' reads: %+v, %d paced", n.Member, n.MemberPaced)
	}
	// 400 chains at 10 a batch (the org's budget).
	if len(n.Batches) < o.Noisy.Recover/delivery.DefaultOrgRecoveryRate || n.Batch.FirstMs <= 0 || n.Batch.LastMs <= 0 {
		t.Errorf("recovery batches: %v, %+v", n.Batches, n.Batch)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := Save(path, res); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if md := resultsMarkdown(loaded, ""); !strings.Contains(md, "The noisy-neighbour lines: run of") ||
		!strings.Contains(md, "org A's recovered chains") || !strings.Contains(md, "serve ") {
		t.Errorf("rendered results lack the noisy-neighbour lines:\n%s", md)
	}
}

// TestExactlyOnceFailsOnAnyMiscount holds the check to every count: a chain re-fired twice, one never
// received, one received twice or a drop outside the recovered window each fail it.
func TestExactlyOnceFailsOnAnyMiscount(t *testing.T) {
	ok := NoisyRecovery{Chains: 10, Dispatches: 10, Distinct: 10, InWindow: 10, Succeeded: 10, Received: 10}
	if !ok.exactlyOnce() {
		t.Fatalf("%+v should pass", ok)
	}
	for name, bad := range map[string]func(*NoisyRecovery){
		"no chains":          func(r *NoisyRecovery) { *r = NoisyRecovery{} },
		"a second dispatch":  func(r *NoisyRecovery) { r.Dispatches = 11 },
		"a delivery twice":   func(r *NoisyRecovery) { r.Distinct = 9 },
		"an older drop":      func(r *NoisyRecovery) { r.InWindow = 9 },
		"a second success":   func(r *NoisyRecovery) { r.Succeeded = 11 },
		"one never received": func(r *NoisyRecovery) { r.Received, r.Missing = 9, 1 },
		"one received twice": func(r *NoisyRecovery) { r.Duplicates = 1 },
	} {
		r := ok
		bad(&r)
		if r.exactlyOnce() {
			t.Errorf("%s: %+v passed", name, r)
		}
	}
}
