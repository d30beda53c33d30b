package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wds/api/console"
	"wds/internal/dev/temporaldev"
	"wds/internal/versions"
	"wds/test/versiontest"
)

// An owner's overview in a real browser shows the worker versions of a deploy in progress: the
// previous one current with its open chain, the next one ramping at its share, read from Temporal.
func TestTheOverviewShowsTheWorkerVersions(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	tc := srv.Client()
	d := versions.Deployments{Temporal: tc, Name: versiontest.Deployment}
	h := newHarness(t, tc, func(c *console.Console) { c.Versions = d })
	versiontest.StartWorker(t, tc, "v1.7.0")
	versiontest.AwaitVersion(t, tc, "v1.7.0")
	if _, err := d.Promote(context.Background(), "v1.7.0"); err != nil {
		t.Fatal(err)
	}
	versiontest.StartChain(t, tc)
	versiontest.StartWorker(t, tc, "v1.8.0")
	versiontest.AwaitVersion(t, tc, "v1.8.0")
	if _, err := d.Ramp(context.Background(), "v1.8.0", 20); err != nil {
		t.Fatal(err)
	}

	ctx := browser(t)
	h.signIn(ctx, h.ownerToken)
	want := []string{"v1.8.0\tramping (20% of new chains)\t", "\t0", "v1.7.0\tcurrent\t", "\t1"}
	var table string
	waitFor(t, 30*time.Second, "the versions table with v1.7.0's open chain", func() bool {
		err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/"), chromedp.WaitVisible(`#versions`),
			chromedp.Text(`#versions`, &table))
		return err == nil && strings.Contains(table, "v1.7.0\tcurrent") && strings.HasSuffix(strings.TrimSpace(table), "\t1")
	})
	rows := strings.Split(strings.TrimSpace(table), "\n")
	if len(rows) != 3 || !strings.HasPrefix(rows[1], want[0]) || !strings.HasSuffix(rows[1], want[1]) ||
		!strings.HasPrefix(rows[2], want[2]) || !strings.HasSuffix(rows[2], want[3]) {
		t.Fatalf("the versions table reads:\n%s", table)
	}
}
