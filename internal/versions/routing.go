package versions

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
)

// Change is a routing change: which version new delivery chains started on before, and after.
type Change struct {
	Deployment string `json:"deployment"`
	// Previous and BuildID are build ids; empty is the unversioned workers.
	Previous    string  `json:"previous_build_id"`
	BuildID     string  `json:"build_id"`
	Status      string  `json:"status"` // Current or Ramping
	RampPercent float32 `json:"ramp_percent,omitempty"`
}

// Promote makes buildID current: every new delivery chain starts on it. Empty buildID sends them to
// the unversioned workers of the last release before versioning.
func (d Deployments) Promote(ctx context.Context, buildID string) (Change, error) {
	desc, err := d.describe(ctx)
	if err != nil {
		return Change{}, err
	}
	return d.setCurrent(ctx, desc, buildID)
}

// setCurrent makes buildID current unless the deployment changed since desc was read.
func (d Deployments) setCurrent(ctx context.Context, desc client.WorkerDeploymentDescribeResponse, buildID string) (Change, error) {
	if err := d.known(desc.Info, buildID); err != nil {
		return Change{}, err
	}
	prev := buildOf(desc.Info.RoutingConfig.CurrentVersion)
	if _, err := SetCurrent(ctx, d.Temporal.WorkerDeploymentClient().GetHandle(d.Name), desc, buildID); err != nil {
		return Change{}, err
	}
	return Change{Deployment: d.Name, Previous: prev, BuildID: buildID, Status: Current}, nil
}

// SetCurrent makes buildID current with desc's conflict token, so a change another operator or a
// worker made since desc was read is not overwritten: that call fails instead (the worker's own
// promotion reads again and retries).
func SetCurrent(ctx context.Context, h client.WorkerDeploymentHandle, desc client.WorkerDeploymentDescribeResponse, buildID string) (client.WorkerDeploymentSetCurrentVersionResponse, error) {
	res, err := h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: buildID, ConflictToken: desc.ConflictToken})
	if err != nil {
		return res, refused(err, "make "+label(desc.Info.Name, buildID)+" current")
	}
	return res, nil
}

// refused answers a routing change Temporal refused on the deployment's state (another change since
// it was read, or a version whose workers do not poll every task queue) as a conflict, with
// Temporal's reason; other failures as unreachable does.
func refused(err error, doing string) error {
	var precondition *serviceerror.FailedPrecondition
	if errors.As(err, &precondition) {
		return problem.Fail(problem.Conflict, "Temporal refused to %s: %s; nothing changed (wds admin version list shows the routing now)", doing, precondition.Message)
	}
	return unreachable(err, doing)
}

// Ramp starts percent of new delivery chains on buildID and the rest on the current version.
func (d Deployments) Ramp(ctx context.Context, buildID string, percent float32) (Change, error) {
	if percent <= 0 || percent > 100 {
		return Change{}, problem.Fail(paging.ErrInvalidParameter, "--percent must be above 0 and at most 100, got %g", percent)
	}
	desc, err := d.describe(ctx)
	if err != nil {
		return Change{}, err
	}
	if err := d.known(desc.Info, buildID); err != nil {
		return Change{}, err
	}
	if cur := desc.Info.RoutingConfig.CurrentVersion; cur != nil && cur.BuildID == buildID {
		return Change{}, problem.Fail(problem.Conflict, "%s is already current; ramp another version", label(d.Name, buildID))
	}
	_, err = d.Temporal.WorkerDeploymentClient().GetHandle(d.Name).SetRampingVersion(ctx, client.WorkerDeploymentSetRampingVersionOptions{
		BuildID: buildID, Percentage: percent, ConflictToken: desc.ConflictToken})
	if err != nil {
		return Change{}, refused(err, "ramp "+label(d.Name, buildID))
	}
	return Change{Deployment: d.Name, Previous: buildOf(desc.Info.RoutingConfig.CurrentVersion), BuildID: buildID,
		Status: Ramping, RampPercent: percent}, nil
}

// Rollback makes the previous version current again: of the versions that were once current or
// ramping, the one whose routing changed last. Its workers must still run.
func (d Deployments) Rollback(ctx context.Context) (Change, error) {
	desc, err := d.describe(ctx)
	if err != nil {
		return Change{}, err
	}
	prev, err := d.previous(ctx, desc.Info)
	if err != nil {
		return Change{}, err
	}
	return d.setCurrent(ctx, desc, prev)
}

// previous is the build id of the version that last stopped taking new chains: one with a drainage
// status was active once, and its routing-changed time is when it stopped.
func (d Deployments) previous(ctx context.Context, info client.WorkerDeploymentInfo) (string, error) {
	h := d.Temporal.WorkerDeploymentClient().GetHandle(d.Name)
	cur := buildOf(info.RoutingConfig.CurrentVersion)
	best, at := "", time.Time{}
	for _, s := range info.VersionSummaries {
		if s.Version.BuildID == cur || s.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusUnspecified {
			continue
		}
		v, err := h.DescribeVersion(ctx, client.WorkerDeploymentDescribeVersionOptions{BuildID: s.Version.BuildID})
		if err != nil {
			return "", unreachable(err, "describe "+label(d.Name, s.Version.BuildID))
		}
		if v.Info.RoutingChangedTime.After(at) {
			best, at = s.Version.BuildID, v.Info.RoutingChangedTime
		}
	}
	if best == "" {
		return "", problem.Fail(problem.Conflict, "%s has no earlier version to roll back to; to go back to the release before "+
			"versioning, whose workers are unversioned: wds admin version promote --unversioned", d.Name)
	}
	return best, nil
}

// known refuses a build id no worker of the deployment has polled as: routing to it would strand
// every new chain. Empty, the unversioned workers, is always known.
func (d Deployments) known(info client.WorkerDeploymentInfo, buildID string) error {
	if buildID == "" || Registered(info, buildID) {
		return nil
	}
	return problem.Fail(problem.NotFound, "%s is no version of the deployment: start its workers first (wds admin version list shows the versions)",
		label(d.Name, buildID))
}

func buildOf(v *worker.WorkerDeploymentVersion) string {
	if v == nil {
		return ""
	}
	return v.BuildID
}
