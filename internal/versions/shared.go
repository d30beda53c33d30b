package versions

import (
	"context"
	"errors"
	"sync"
	"time"
)

// SharedFor is how long one read of the deployment serves every console overview of a `wds serve`.
const SharedFor = 10 * time.Second

// Shared serves the deployment's versions from one read of Temporal every SharedFor, whichever org's
// overview asks. The versions are the workspace's, the same for every org, and a read costs Temporal
// a describe and a count of open workflows per version (tens of milliseconds of its CPU each on the
// dev server, growing with the workflows it keeps): read per page load, an org's members reloading
// the overview in a loop took Temporal's time from every other org's deliveries.
type Shared struct {
	Source interface {
		List(ctx context.Context) (Deployment, error)
	}
	now func() time.Time // time.Now; tests move it

	// mu is held through a read, so the overviews that ask meanwhile wait for its answer instead of
	// asking Temporal again.
	mu   sync.Mutex
	at   time.Time
	last Deployment
	err  error
}

// List answers the last read if it is under SharedFor old, else reads again. A failed read is kept
// too (Temporal unreachable or slow is not asked again by every page), unless the caller went away
// first: its cancelled read says nothing of Temporal.
func (s *Shared) List(ctx context.Context) (Deployment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	if !s.at.IsZero() && now.Sub(s.at) < SharedFor {
		return s.last, s.err
	}
	d, err := s.Source.List(ctx)
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return d, err
	}
	s.at, s.last, s.err = now, d, err
	return d, err
}

func (s *Shared) clock() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}
