package versions_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"wds/internal/dev/temporaldev"
	"wds/internal/platform/answer"
	"wds/internal/versions"
	"wds/test/versiontest"
)

// A deploy and a rollback on a real dev server, two workers of different build ids: the list shows
// each version's status and open chains, promote and ramp move new chains, rollback goes back to the
// version that was current before, and a wrong build id or percentage is refused.
func TestVersionsListPromoteRampAndRollBack(t *testing.T) {
	srv, err := temporaldev.Start(context.Background(), temporaldev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	c := srv.Client()
	d := versions.Deployments{Temporal: c, Name: versiontest.Deployment}
	ctx := context.Background()

	_, err = d.List(ctx)
	wantCode(t, err, "not_found")

	versiontest.StartWorker(t, c, "v1")
	versiontest.AwaitVersion(t, c, "v1")
	if ch, err := d.Promote(ctx, "v1"); err != nil || ch.Previous != "" || ch.BuildID != "v1" || ch.Status != versions.Current {
		t.Fatalf("promote v1: %+v %v", ch, err)
	}
	_, err = d.Rollback(ctx)
	wantCode(t, err, "conflict") // nothing was current before v1
	versiontest.StartChain(t, c)
	awaitList(t, d, "v1 current 1", func(l versions.Deployment) bool { return has(l, "v1", versions.Current, 1) })

	versiontest.StartWorker(t, c, "v2")
	versiontest.AwaitVersion(t, c, "v2")
	awaitList(t, d, "v2 inactive beside v1", func(l versions.Deployment) bool {
		return has(l, "v2", versions.Inactive, 0) && has(l, "v1", versions.Current, 1) && l.Versions[0].BuildID == "v2"
	})
	_, err = d.Promote(ctx, "v3")
	wantCode(t, err, "not_found")
	_, err = d.Ramp(ctx, "v2", 0)
	wantCode(t, err, "invalid_parameter")
	_, err = d.Ramp(ctx, "v1", 50)
	wantCode(t, err, "conflict")
	if ch, err := d.Ramp(ctx, "v2", 25); err != nil || ch.Previous != "v1" || ch.RampPercent != 25 {
		t.Fatalf("ramp v2: %+v %v", ch, err)
	}
	awaitList(t, d, "v2 ramping at 25%", func(l versions.Deployment) bool {
		return len(l.Versions) == 2 && l.Versions[0].Status == versions.Ramping && l.Versions[0].RampPercent == 25
	})

	if ch, err := d.Promote(ctx, "v2"); err != nil || ch.Previous != "v1" || ch.BuildID != "v2" {
		t.Fatalf("promote v2: %+v %v", ch, err)
	}
	versiontest.StartChain(t, c)
	awaitList(t, d, "v2 current with its chain, v1 draining with its own", func(l versions.Deployment) bool {
		return has(l, "v2", versions.Current, 1) && has(l, "v1", versions.Draining, 1) && l.UnversionedOpen == 0
	})

	if ch, err := d.Rollback(ctx); err != nil || ch.Previous != "v2" || ch.BuildID != "v1" {
		t.Fatalf("rollback: %+v %v", ch, err)
	}
	awaitList(t, d, "v1 current again, v2 draining", func(l versions.Deployment) bool {
		return has(l, "v1", versions.Current, 1) && has(l, "v2", versions.Draining, 1)
	})
	h := c.WorkerDeploymentClient().GetHandle(versiontest.Deployment)
	stale, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ch, err := d.Rollback(ctx); err != nil || ch.BuildID != "v2" {
		t.Fatalf("a second rollback undoes the first: %+v %v", ch, err)
	}
	// A change made on what was read before another one is refused, not applied over it.
	_, err = versions.SetCurrent(ctx, h, stale, "v1")
	wantCode(t, err, "conflict")
}

// awaitList waits for the list to show what want checks: visibility and drainage lag a little.
func awaitList(t *testing.T, d versions.Deployments, what string, want func(versions.Deployment) bool) {
	t.Helper()
	var l versions.Deployment
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if l, err = d.List(context.Background()); err == nil && want(l) {
			return
		}
	}
	t.Fatalf("want %s, the list is %+v (%v)", what, l, err)
}

func has(l versions.Deployment, build, status string, open int64) bool {
	for _, v := range l.Versions {
		if v.BuildID == build {
			return v.Status == status && v.OpenWorkflows == open && !v.CreatedAt.IsZero()
		}
	}
	return false
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got, detail := answer.Code(err); err == nil || got != code {
		t.Fatalf("want %s, got %v (%s: %s)", code, err, got, detail)
	}
}
