package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"wds/internal/platform/config"
	"wds/internal/versions"
)

// Deployment is the Temporal Worker Deployment Version a worker runs as (docs/production.md,
// Deploys): the server routes each workflow's tasks only to workers of the version that runs it, so
// a worker never replays a history another release's code wrote for a pinned workflow.
type Deployment struct {
	// Name is the Worker Deployment, WDS_DEPLOYMENT_NAME (wds).
	Name string
	// BuildID tells this release's workers from another's: WDS_BUILD_ID, or the binary's version.
	BuildID string
	// Promote says when the worker makes its version the deployment's current one, the version new
	// workflows start on: config.PromoteFirst, PromoteAlways or PromoteNever (WDS_PROMOTE_VERSION).
	Promote string
}

// version is the deployment version the worker declares.
func (d Deployment) version() sdkworker.WorkerDeploymentVersion {
	return sdkworker.WorkerDeploymentVersion{DeploymentName: d.Name, BuildID: d.BuildID}
}

// options opt a worker into versioning. Every workflow type declares its own behaviour at
// registration (RegisterWorkflows), so there is no default: a type registered without one fails the
// worker's start.
func (d Deployment) options() sdkworker.DeploymentOptions {
	return sdkworker.DeploymentOptions{UseVersioning: true, Version: d.version()}
}

func (d Deployment) check() error {
	if d.Name == "" || d.BuildID == "" {
		return fmt.Errorf("the worker needs a deployment name and a build id, got %q and %q", d.Name, d.BuildID)
	}
	return nil
}

// promoteRetry is how often promote asks again while the server has not yet registered the version
// (it does when the worker's first polls arrive) or another worker's change raced this one.
const promoteRetry = 250 * time.Millisecond

// promote makes the worker's version current when d.Promote asks for it, retrying until it is done
// or ctx ends. The server records a version when its workers first poll, so this runs after they
// started. Starters never name a version: the server gives each new workflow the current one.
func promote(ctx context.Context, c client.Client, d Deployment, log logrus.FieldLogger) {
	if d.Promote == config.PromoteNever {
		return
	}
	h := c.WorkerDeploymentClient().GetHandle(d.Name)
	warned := false
	for {
		done, set, err := promoteOnce(ctx, h, d)
		switch {
		case set:
			log.WithFields(logrus.Fields{"deployment": d.Name, "build_id": d.BuildID}).Info("this worker's version is now the deployment's current one")
			return
		case done:
			return
		case err != nil && !warned && ctx.Err() == nil:
			log.WithError(err).Warn("cannot yet make this worker's version current; retrying")
			warned = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(promoteRetry):
		}
	}
}

// promoteOnce reads the deployment and sets the worker's version current if the policy wants it:
// done is true once nothing is left to do, set when this call made the version current.
func promoteOnce(ctx context.Context, h client.WorkerDeploymentHandle, d Deployment) (done, set bool, err error) {
	desc, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return false, false, nil // the first polls have not registered the deployment yet
	}
	if err != nil {
		return false, false, fmt.Errorf("describe worker deployment %s: %w", d.Name, err)
	}
	routing := desc.Info.RoutingConfig
	if cur := routing.CurrentVersion; cur != nil && *cur == d.version() {
		return true, false, nil
	}
	// "first": only a deployment whose current version was never set, so a worker restarted after an
	// operator rolled back (to another version or to unversioned workers) does not take routing back.
	if d.Promote == config.PromoteFirst && (routing.CurrentVersion != nil || !routing.CurrentVersionChangedTime.IsZero()) {
		return true, false, nil
	}
	if !versions.Registered(desc.Info, d.BuildID) {
		return false, false, nil
	}
	if _, err := versions.SetCurrent(ctx, h, desc, d.BuildID); err != nil {
		return false, false, err
	}
	return true, true, nil
}

// AwaitCurrent waits until d's version is the deployment's current one or ctx ends: wds dev waits so
// before it says it is up, so the first event a person sends starts on its worker at once.
func AwaitCurrent(ctx context.Context, c client.Client, d Deployment) error {
	h := c.WorkerDeploymentClient().GetHandle(d.Name)
	for {
		desc, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
		if cur := desc.Info.RoutingConfig.CurrentVersion; err == nil && cur != nil && *cur == d.version() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("version %s:%s is not current: %w", d.Name, d.BuildID, ctx.Err())
		case <-time.After(promoteRetry):
		}
	}
}
