package worker

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"wds/internal/dev/temporaldev"
	"wds/internal/platform/config"
	"wds/internal/versions"
	"wds/workflows/contract"
)

// Each WDS_PROMOTE_VERSION on a real dev server: never leaves a registered version aside, first
// promotes only on a deployment that never had a current version, always takes the routing.
func TestPromoteFollowsItsSetting(t *testing.T) {
	srv, err := temporaldev.Start(context.Background(), temporaldev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	c := srv.Client()
	log := logrus.New()
	log.SetOutput(io.Discard)
	run := func(build, setting string) {
		t.Helper()
		d := Deployment{Name: "wds", BuildID: build, Promote: setting}
		for _, queue := range []string{contract.TaskQueue, contract.ManualTaskQueue} {
			w := sdkworker.New(c, queue, sdkworker.Options{DeploymentOptions: d.options()})
			RegisterWorkflows(w)
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		promote(ctx, c, d, log)
		for !versionKnown(ctx, c, d) { // the polls register the version, promoted or not
			if ctx.Err() != nil {
				t.Fatalf("version %s never registered", build)
			}
			time.Sleep(promoteRetry)
		}
	}
	current := func() string {
		t.Helper()
		desc, err := c.WorkerDeploymentClient().GetHandle("wds").Describe(context.Background(), client.WorkerDeploymentDescribeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v := desc.Info.RoutingConfig.CurrentVersion; v != nil {
			return v.BuildID
		}
		return ""
	}
	for _, step := range []struct{ build, setting, want string }{
		{"a", config.PromoteNever, ""},
		{"b", config.PromoteFirst, "b"},
		{"c", config.PromoteFirst, "b"},
		{"d", config.PromoteAlways, "d"},
	} {
		run(step.build, step.setting)
		if got := current(); got != step.want {
			t.Fatalf("after a worker of %s with %s, the current version is %q, want %q", step.build, step.setting, got, step.want)
		}
	}
}

func versionKnown(ctx context.Context, c client.Client, d Deployment) bool {
	desc, err := c.WorkerDeploymentClient().GetHandle(d.Name).Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	return err == nil && versions.Registered(desc.Info, d.BuildID)
}
