package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestProfileWorker takes wds worker's CPU profile while it delivers, as `-profile worker` does: the
// profile must parse, hold samples of the worker's own delivery code, and come with the CPU each
// delivered event cost.
func TestProfileWorker(t *testing.T) {
	o := Smoke()
	o.Log, o.Duration = t.Output(), 3*time.Second
	out := filepath.Join(t.TempDir(), "worker.pprof")
	m, err := Profile(context.Background(), o, "worker", out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Ops < o.ScaleEvents || m.PerSecond <= 0 || m.WorkerCPUms <= 0 || m.TemporalCPUms <= 0 {
		t.Errorf("implausible measure %+v", m)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("the profile does not parse: %v", err)
	}
	// A 3-second smoke run under -race holds a few dozen samples, most in the SDK and net/http: any
	// sample of wds's own worker code (activities, workflows, the worker) shows whose profile it is.
	if !profiledIn(p, "wds/activities.") && !profiledIn(p, "wds/workflows") && !profiledIn(p, "wds/worker.") {
		t.Errorf("no sample of the worker's own code in %d samples: not wds worker's profile?", len(p.Sample))
	}
}

// profiledIn reports whether a sample of p passes through a function whose name starts with prefix.
func profiledIn(p *profile.Profile, prefix string) bool {
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil && strings.HasPrefix(line.Function.Name, prefix) {
					return true
				}
			}
		}
	}
	return false
}
