// Package versions is the operator's view and control of wds's Temporal Worker Deployment
// (docs/production.md, Deploys and rollbacks): the versions its workers declared, which one new
// delivery chains start on, and how many chains each still holds. `wds admin version ...`, the
// console's overview and the worker's own promotion (WDS_PROMOTE_VERSION) all go through it.
package versions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"wds/internal/platform/problem"
	"wds/workflows/contract"
)

// ErrTemporalUnavailable is a Temporal that did not answer: nothing was read or changed, retry.
var ErrTemporalUnavailable = problem.New(problem.Unavailable, "temporal_unavailable", "Temporal cannot be reached now")

// unreachable turns a call that failed for want of Temporal into ErrTemporalUnavailable, naming what
// was asked; any other failure is returned as it is.
func unreachable(err error, doing string) error {
	var unavailable *serviceerror.Unavailable
	if errors.As(err, &unavailable) || errors.Is(err, context.DeadlineExceeded) {
		return problem.Fail(ErrTemporalUnavailable, "Temporal did not answer (%s): %v; nothing changed, retry", doing, err)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// The status of a version, as `wds admin version list` and the console show it.
const (
	// Current: new delivery chains start on it.
	Current = "current"
	// Ramping: a share of new chains (Version.RampPercent) start on it.
	Ramping = "ramping"
	// Draining: no new chains start on it, and some it started are still open: keep its workers.
	Draining = "draining"
	// Drained: none of its chains is open any more: its workers can stop.
	Drained = "drained"
	// Inactive: its workers polled, but it was never current nor ramping.
	Inactive = "inactive"
)

// Version is one Worker Deployment Version of the deployment.
type Version struct {
	BuildID     string    `json:"build_id"`
	Status      string    `json:"status"`
	RampPercent float32   `json:"ramp_percent,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// OpenWorkflows is how many delivery workflows (an event's chains, a re-fire, a test) still run
	// on the version, from Temporal's visibility, which lags by a second or so.
	OpenWorkflows int64 `json:"open_workflows"`
}

// Deployment is the deployment's versions, newest first.
type Deployment struct {
	Name     string    `json:"deployment"`
	Versions []Version `json:"versions"`
	// UnversionedOpen is how many delivery workflows still run on no version: those the last release
	// before versioning started (docs/production.md, Which releases upgrade to which).
	UnversionedOpen int64 `json:"unversioned_open_workflows"`
}

// Deployments reads and changes the routing of one Worker Deployment.
type Deployments struct {
	Temporal client.Client
	Name     string // WDS_DEPLOYMENT_NAME
}

// deliveryWorkflows is the visibility filter of delivery workflows: the pinned types, whose open
// runs keep a version's workers needed. Recoveries auto-upgrade and never hold a version.
var deliveryWorkflows = fmt.Sprintf("WorkflowType IN ('%s', '%s', '%s', '%s') AND ExecutionStatus = 'Running'",
	contract.EventWorkflowName, contract.PlannedEventWorkflowName, contract.RefireWorkflowName, contract.TestWorkflowName)

// OpenQuery is the visibility query of the delivery workflows still running on buildID of
// deployment, or on no version when buildID is empty: the query `temporal workflow count` takes.
func OpenQuery(deployment, buildID string) string {
	if buildID == "" {
		return "TemporalWorkerDeploymentVersion IS NULL AND " + deliveryWorkflows
	}
	return fmt.Sprintf("TemporalWorkerDeploymentVersion = '%s:%s' AND %s", deployment, buildID, deliveryWorkflows)
}

// List reads the deployment's versions, each with its status and open delivery workflows.
func (d Deployments) List(ctx context.Context) (Deployment, error) {
	desc, err := d.describe(ctx)
	if err != nil {
		return Deployment{}, err
	}
	out := Deployment{Name: d.Name, Versions: []Version{}}
	routing := desc.Info.RoutingConfig
	for _, s := range desc.Info.VersionSummaries {
		v := Version{BuildID: s.Version.BuildID, Status: status(s, routing), CreatedAt: s.CreateTime.UTC()}
		if v.Status == Ramping {
			v.RampPercent = routing.RampingVersionPercentage
		}
		if v.OpenWorkflows, err = d.count(ctx, v.BuildID); err != nil {
			return Deployment{}, err
		}
		out.Versions = append(out.Versions, v)
	}
	slices.SortStableFunc(out.Versions, func(a, b Version) int { return b.CreatedAt.Compare(a.CreatedAt) })
	out.UnversionedOpen, err = d.count(ctx, "")
	return out, err
}

// status is a version's place in the routing, or else its drainage.
func status(s client.WorkerDeploymentVersionSummary, routing client.WorkerDeploymentRoutingConfig) string {
	switch {
	case routing.CurrentVersion != nil && *routing.CurrentVersion == s.Version:
		return Current
	case routing.RampingVersion != nil && *routing.RampingVersion == s.Version:
		return Ramping
	case s.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDraining:
		return Draining
	case s.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDrained:
		return Drained
	}
	return Inactive
}

func (d Deployments) count(ctx context.Context, buildID string) (int64, error) {
	res, err := d.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: OpenQuery(d.Name, buildID)})
	if err != nil {
		return 0, unreachable(err, "count the open workflows of "+label(d.Name, buildID))
	}
	return res.GetCount(), nil
}

// label names a version as Temporal does, deployment:build, or the unversioned workers.
func label(deployment, buildID string) string {
	if buildID == "" {
		return "the unversioned workers"
	}
	return deployment + ":" + buildID
}

// describe reads the deployment, not_found when no worker of it ever polled.
func (d Deployments) describe(ctx context.Context) (client.WorkerDeploymentDescribeResponse, error) {
	desc, err := d.Temporal.WorkerDeploymentClient().GetHandle(d.Name).Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return desc, problem.Fail(problem.NotFound, "Temporal knows no worker deployment %q: no worker of it has polled yet (WDS_DEPLOYMENT_NAME)", d.Name)
	}
	if err != nil {
		return desc, unreachable(err, "describe worker deployment "+d.Name)
	}
	return desc, nil
}

// Registered reports whether the server knows buildID's version: it does once its workers polled,
// and routing can name only such a version.
func Registered(info client.WorkerDeploymentInfo, buildID string) bool {
	for _, v := range info.VersionSummaries {
		if v.Version.BuildID == buildID {
			return true
		}
	}
	return false
}
