// Package versiontest runs versioned wds workers of any build id on a Temporal server, and delivery
// chains that stay open on the version that started them, for the tests of the operator's version
// tools (internal/versions, `wds admin version`, the console's overview).
package versiontest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"wds/models"
	"wds/workflows"
	"wds/workflows/contract"
)

// Deployment is the deployment name the helpers use, wds's default.
const Deployment = "wds"

// StartWorker runs the planned delivery workflow as version Deployment:build on both task queues, as
// `wds worker` does, until the test ends. Its Deliver holds every attempt for an hour, so each chain
// it starts waits on a timer and stays open.
func StartWorker(t *testing.T, c client.Client, build string) {
	t.Helper()
	opts := sdkworker.Options{DeploymentOptions: sdkworker.DeploymentOptions{UseVersioning: true,
		Version: sdkworker.WorkerDeploymentVersion{DeploymentName: Deployment, BuildID: build}}}
	for _, queue := range []string{contract.TaskQueue, contract.ManualTaskQueue} {
		w := sdkworker.New(c, queue, opts)
		// The delivery workflow pinned, as worker.RegisterWorkflows registers it (a test helper may not
		// import the worker process: test/layout).
		w.RegisterWorkflowWithOptions(workflows.EventWorkflow, workflow.RegisterOptions{Name: contract.PlannedEventWorkflowName,
			VersioningBehavior: workflow.VersioningBehaviorPinned})
		w.RegisterActivityWithOptions(hold, activity.RegisterOptions{Name: contract.ActivityDeliver})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
}

// hold is a Deliver that finds the endpoint's rate limit full for an hour.
func hold(context.Context, contract.AttemptInput) (contract.AttemptResult, error) {
	return contract.AttemptResult{Outcome: models.StatusHeld, Wait: time.Hour}, nil
}

// AwaitVersion waits until Temporal knows build's version on both task queues: its workers' first
// polls register it, one queue at a time, and routing refuses a version missing a queue.
func AwaitVersion(t *testing.T, c client.Client, build string) {
	t.Helper()
	h := c.WorkerDeploymentClient().GetHandle(Deployment)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		v, err := h.DescribeVersion(context.Background(), client.WorkerDeploymentDescribeVersionOptions{BuildID: build})
		if err == nil && polled(v.Info.TaskQueuesInfos, contract.TaskQueue) && polled(v.Info.TaskQueuesInfos, contract.ManualTaskQueue) {
			return
		}
	}
	t.Fatalf("version %s:%s never registered on both task queues", Deployment, build)
}

func polled(queues []client.WorkerDeploymentTaskQueueInfo, name string) bool {
	for _, q := range queues {
		if q.Name == name && q.Type == client.TaskQueueTypeWorkflow {
			return true
		}
	}
	return false
}

// StartChain starts a planned delivery of one event to one endpoint, as the starter does: it runs on
// the current version and waits there, held, until the test ends.
func StartChain(t *testing.T, c client.Client) {
	t.Helper()
	ev := uuid.New()
	p := contract.EventParams{EventID: ev, OrgID: uuid.New(), EventType: "order.created", Design: contract.CurrentDesign,
		Chains: []contract.PlannedChain{{Target: contract.Target{EndpointID: uuid.New(), URL: "https://receiver.example/hook", MaxAttempts: 1},
			ChainID: uuid.New(), FirstDeliveryID: uuid.New()}}}
	_, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: contract.EventWorkflowID(ev), TaskQueue: contract.TaskQueue},
		contract.PlannedEventWorkflowName, p)
	if err != nil {
		t.Fatal(err)
	}
}
