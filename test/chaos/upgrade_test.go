package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"wds/internal/dev/temporaldev"
)

// previousRelease is the release a deploy of this tree replaces, and the one a rollback goes back
// to: the first release of the event-state move (migration 00049), before this tree's second
// (00050), whose processes must run on it. Its wds is built from git history, and its workers are
// the version of its short commit (previousBuild).
const previousRelease = "e33d7e9a73f2e15a5d47cb289a68947f16f1b3b8"

// previousBuild is the previous release's build id: buildRelease stamps the short commit as its
// version, and WDS_BUILD_ID is unset.
var previousBuild = previousRelease[:12]

// buildID is the version TestMain builds this tree's wds with: its workers' build id, since
// WDS_BUILD_ID is unset.
const buildID = "chaos"

var previous struct {
	once sync.Once
	bin  string
	err  error
}

// previousBinary builds the previous release's wds once per test binary.
func previousBinary(t *testing.T) string {
	t.Helper()
	previous.once.Do(func() { previous.bin, previous.err = buildRelease(previousRelease) })
	if previous.err != nil {
		t.Fatal(previous.err)
	}
	return previous.bin
}

// buildRelease extracts commit's tree from the repository's history and builds its wds, with the
// short commit id as its version. -trimpath lets the build reuse the cache for unchanged packages.
func buildRelease(commit string) (string, error) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("find the repository (the upgrade tests build %s from its history): %w", commit, err)
	}
	src, tarball := filepath.Join(binDir, "src-"+commit[:12]), filepath.Join(binDir, commit[:12]+".tar")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	steps := []*exec.Cmd{
		exec.Command("git", "-C", strings.TrimSpace(string(root)), "archive", "-o", tarball, commit),
		exec.Command("tar", "-xf", tarball, "-C", src),
		exec.Command("go", "build", "-trimpath", "-ldflags", "-X main.version="+commit[:12], "-o", filepath.Join(binDir, "wds-"+commit[:12]), "./cmd/wds"),
	}
	for _, c := range steps {
		c.Dir, c.Env = src, append(os.Environ(), "GOFLAGS=-buildvcs=false")
		if out, err := c.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build wds %s: %s: %w: %s", commit, strings.Join(c.Args, " "), err, out)
		}
	}
	return filepath.Join(binDir, "wds-"+commit[:12]), nil
}

// upgradeHeaders are the custom headers of the upgrade scenarios' endpoints: sealed at rest, every
// POST must carry them with these values, whichever release sends it.
var upgradeHeaders = map[string]string{"X-Upgrade-Check": "sealed value, 1 of 1"}

// upgradeLadder is the seconds to attempt 2 in the upgrade scenarios: every chain to retryPath
// waits that long on a timer, across the deploy.
func upgradeLadder() int { return scaled(8, 30) }

// previousSystem runs the previous release, serve and one worker (whose version it makes current, the
// deployment having none), with an endpoint whose chains wait on the ladder's timer and one whose
// attempts are held mid-POST for a second.
func previousSystem(t *testing.T, kind temporalKind) (*system, []string) {
	ladder := upgradeLadder()
	s := newSystemOf(t, previousBinary(t), time.Second, kind,
		fmt.Sprintf("WDS_WEBHOOK_RETRY_SCHEDULE=%ds,%ds", ladder, 2*ladder))
	s.startWorker()
	s.awaitCurrent(t, previousBuild)
	s.endpointWith(retryPath, failFirstAttempt, 5, upgradeHeaders)
	s.endpointWith(slowPath, answerSlowly, 1, upgradeHeaders)
	return s, []string{retryPath, slowPath}
}

// upgradeRate is the stream of new events every upgrade scenario runs under.
const upgradeRate = 10

// awaitWaiting waits until chains wait on the ladder's timer and attempts are mid-POST: what a deploy
// must carry over.
func (s *system) awaitWaiting(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Duration(upgradeLadder()) * time.Second)
	for s.rcv.waiting(retryPath) < 10 || s.rcv.inFlight.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("before the deploy %d chains waited on timers and %d attempts were mid-POST", s.rcv.waiting(retryPath), s.rcv.inFlight.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// migrateTo runs bin's `wds migrate up`, a deploy's first step: the schema changes are
// expand-then-contract, so the previous release's processes keep running on the new schema while the
// new release's start.
func (s *system) migrateTo(bin string) {
	prev := s.bin
	s.bin = bin
	s.wds("migrate", "up")
	s.bin = prev
}

// promoteWorkers starts a worker of bin, whose version is build, and makes that version current, as
// a deploy's operator does (`temporal worker deployment set-current-version`): the deployment has a
// current version, so the worker leaves routing alone (WDS_PROMOTE_VERSION first). The workers of
// the version it replaces keep running the chains pinned to it.
func (s *system) promoteWorkers(t *testing.T, bin, build string) {
	t.Helper()
	s.bin = bin
	s.startWorker()
	s.setCurrent(t, build)
}

// replaceServe starts a serve of bin, sends the load to it, and stops the old one with SIGTERM, as a
// load balancer and a rolling deploy do.
func (s *system) replaceServe(t *testing.T, l *load, bin string) {
	t.Helper()
	old := s.serve
	s.bin = bin
	s.startServe()
	l.retarget(s.base)
	old.stop()
}

// awaitCurrent waits until the wds deployment's current version is build (empty: unversioned workers).
func (s *system) awaitCurrent(t *testing.T, build string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		current, err := s.currentBuild()
		if err == nil && current == build {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the wds deployment's current version is %q (%v), want %q", current, err, build)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// currentBuild is the build id of the wds deployment's current version, empty for unversioned.
func (s *system) currentBuild() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := s.temporal.client().WorkerDeploymentClient().GetHandle("wds").Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	if err != nil {
		return "", err
	}
	if v := d.Info.RoutingConfig.CurrentVersion; v != nil {
		return v.BuildID, nil
	}
	return "", nil
}

// noTaskFailed reads every workflow's history: no workflow task may have failed, which is what a
// worker replaying another release's history wrongly would do (a non-determinism error). It returns
// each workflow's start time, by workflow id.
func (s *system) noTaskFailed(t *testing.T) map[string]time.Time {
	t.Helper()
	ctx := context.Background()
	c := s.temporal.client()
	var token []byte
	started := map[string]time.Time{}
	for {
		page, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 500, NextPageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range page.Executions {
			started[w.Execution.WorkflowId] = w.StartTime.AsTime()
			s.checkHistory(t, w.Execution.WorkflowId, w.Execution.RunId)
		}
		if token = page.NextPageToken; len(token) == 0 {
			return started
		}
	}
}

// checkHistory fails the test if a workflow task of the workflow failed, and then keeps the whole
// history as JSON in the system's directory and prints it a line an event, so that a failure on a
// machine whose files are gone still says which worker wrote what, in which order.
func (s *system) checkHistory(t *testing.T, workflowID, runID string) {
	t.Helper()
	it := s.temporal.client().GetWorkflowHistory(context.Background(), workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	failed := false
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
		if e.EventType == enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED {
			failed = true
			t.Errorf("%s: workflow task failed: %v", workflowID, e.GetWorkflowTaskFailedEventAttributes().GetFailure().GetMessage())
		}
	}
	if !failed {
		return
	}
	opts := temporalproto.CustomJSONMarshalOptions{Indent: "  "}
	if b, err := opts.Marshal(h); err == nil {
		_ = os.WriteFile(filepath.Join(s.dir, strings.ReplaceAll(workflowID, "/", "_")+".json"), b, 0o644)
	}
	for _, e := range h.Events {
		t.Logf("%s %3d %s %s", workflowID, e.EventId, e.EventTime.AsTime().Format("15:04:05.000"), eventLine(e))
	}
}

// eventLine names what an event says about the run's order: the worker of a task, a marker's name,
// an activity's id and type.
func eventLine(e *historypb.HistoryEvent) string {
	kind := strings.TrimPrefix(e.EventType.String(), "EVENT_TYPE_")
	switch a := e.Attributes.(type) {
	case *historypb.HistoryEvent_WorkflowTaskStartedEventAttributes:
		return kind + " by " + a.WorkflowTaskStartedEventAttributes.Identity
	case *historypb.HistoryEvent_WorkflowTaskCompletedEventAttributes:
		at := a.WorkflowTaskCompletedEventAttributes
		return fmt.Sprintf("%s by %s (build %q, %v)", kind, at.Identity, at.GetDeploymentVersion().GetBuildId(), at.VersioningBehavior)
	case *historypb.HistoryEvent_WorkflowTaskFailedEventAttributes:
		return kind + " by " + a.WorkflowTaskFailedEventAttributes.Identity + ": " + a.WorkflowTaskFailedEventAttributes.GetCause().String()
	case *historypb.HistoryEvent_WorkflowTaskTimedOutEventAttributes:
		return kind + " " + a.WorkflowTaskTimedOutEventAttributes.TimeoutType.String()
	case *historypb.HistoryEvent_MarkerRecordedEventAttributes:
		at := a.MarkerRecordedEventAttributes
		line := kind + " " + at.MarkerName
		if data := at.Details["data"].GetPayloads(); len(data) > 0 {
			line += " " + string(data[0].Data) // a local activity's id, type, attempt and time
		}
		if f := at.GetFailure(); f != nil {
			line += " failed: " + f.Message
		}
		return line
	case *historypb.HistoryEvent_ActivityTaskScheduledEventAttributes:
		return fmt.Sprintf("%s %s id %s", kind, a.ActivityTaskScheduledEventAttributes.ActivityType.GetName(), a.ActivityTaskScheduledEventAttributes.ActivityId)
	}
	return kind
}

// switchDelay bounds how late a chain's next attempt may come across a switch of the current
// version. A chain is pinned to its version, whose workers run until it ends, so no task of it is
// handed over: it is late only by the load of the deploy, up to 7 s seen on the cluster. Late, never
// early, and never skipped.
const switchDelay = 45 * time.Second

// ladderKept checks that each chain to retryPath made attempt 2 at its ladder time, and no attempt
// after it: no rung skipped, none early, none lost across the deploy. The ladder is anchored on the
// chain's first workflow task, which comes after the workflow's start (started) and before attempt
// 1's row: attempt 2 is early if it comes before the start plus the ladder.
func (s *system) ladderKept(t *testing.T, started map[string]time.Time) {
	t.Helper()
	ladder := time.Duration(upgradeLadder()) * time.Second
	var rows []struct {
		WorkflowID string
		Attempt2   *time.Time
	}
	if err := s.db.Raw(`SELECT a1.workflow_id, a2.attempted_at AS attempt2
		FROM webhook_deliveries a1 LEFT JOIN webhook_deliveries a2 ON a2.chain_id = a1.chain_id AND a2.attempt = 2
		WHERE a1.attempt = 1 AND a1.endpoint_id::text = ?`, s.rcv.endpointID(retryPath)).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	var beyond int64
	if err := s.db.Raw(`SELECT count(*) FROM webhook_deliveries WHERE attempt > 2 AND endpoint_id::text = ?`,
		s.rcv.endpointID(retryPath)).Scan(&beyond).Error; err != nil {
		t.Fatal(err)
	}
	var missing, early, late int
	var latest time.Duration
	for _, r := range rows {
		start, ok := started[r.WorkflowID]
		if r.Attempt2 == nil || !ok {
			missing++
			continue
		}
		after := r.Attempt2.Sub(start)
		latest = max(latest, after)
		switch {
		case after < ladder:
			early++
		case after > ladder+switchDelay:
			late++
		}
	}
	t.Logf("%d chains to %s: attempt 2 came at most %v after its workflow started (ladder %v)", len(rows), retryPath, latest.Round(100*time.Millisecond), ladder)
	if len(rows) == 0 || missing+early+late > 0 || beyond > 0 {
		t.Errorf("of %d chains, %d have no attempt 2, %d made it early, %d over %v late; %d attempts past 2",
			len(rows), missing, early, late, switchDelay, beyond)
	}
}

// upgradeChecks are what every upgrade scenario owes besides settle's: no task failed, the ladder
// kept, and the routing the deploy ends with.
func (s *system) upgradeChecks(t *testing.T, wantCurrent string) {
	t.Helper()
	started := s.noTaskFailed(t)
	t.Logf("%d workflow histories read, none with a failed workflow task", len(started))
	s.ladderKept(t, started)
	if current, err := s.currentBuild(); err != nil || current != wantCurrent {
		t.Errorf("the wds deployment's current version is %q (%v), want %q", current, err, wantCurrent)
	}
}

// upgradeKinds are the Temporal servers an upgrade scenario runs on: the dev server and the cluster
// for the first scenario and, in make chaos, for every one; make test runs the others on the dev
// server alone, to keep it short.
func upgradeKinds(first bool) []temporalKind {
	if first || *long {
		return onBoth
	}
	return onBoth[:1]
}

func TestUpgradeWorkersFirstThenServe(t *testing.T) {
	for _, kind := range upgradeKinds(true) {
		t.Run(kind.label(), func(t *testing.T) { upgrade(t, kind, true) })
	}
}

// upgrade deploys this tree over the previous release under load, its workers then serve or serve
// then its workers, each only after the new binary's migrations ran, as the runbook says; the
// previous release's workers are stopped once the chains pinned to their version ended.
func upgrade(t *testing.T, kind temporalKind, workersFirst bool) {
	s, paths := previousSystem(t, kind)
	prev := s.bin
	l := newLoad(s)
	first, second := func() { s.promoteWorkers(t, wdsBin, buildID) }, func() { s.replaceServe(t, l, wdsBin) }
	order := "workers first, then serve"
	if !workersFirst {
		first, second, order = second, first, "serve first, then the workers"
	}
	began := time.Now()
	var drained time.Duration
	underLoadAt(l, upgradeRate, func() {
		s.awaitWaiting(t)
		s.migrateTo(wdsBin)
		first()
		time.Sleep(dur(3*time.Second, 30*time.Second))
		second()
		switched := time.Now()
		s.stopWorkersOfDrained(t, prev, previousBuild)
		drained = time.Since(switched)
		time.Sleep(dur(3*time.Second, 30*time.Second))
	})
	s.settle(t, l, kind.scenario(fmt.Sprintf("deploy from the previous release: %s, while chains wait on ladder timers and attempts are mid-POST; its workers stopped once their chains ended (%v)",
		order, drained.Round(time.Second))), fmt.Sprintf("%d creates/s for %v", upgradeRate, time.Since(began).Round(time.Second)), paths...)
	s.upgradeChecks(t, buildID)
	s.ranOn(t, previousBuild, buildID)
}

func TestUpgradeServeFirstThenWorkers(t *testing.T) {
	for _, kind := range upgradeKinds(false) {
		t.Run(kind.label(), func(t *testing.T) { upgrade(t, kind, false) })
	}
}

// TestRollbackToThePreviousRelease deploys this tree over the previous release, workers first, then
// goes back to it while chains of both versions wait on ladder timers: routing back to the previous
// version, whose workers still run, and its serve started; this tree's workers kept until their
// pinned chains ended, then stopped. The schema stays migrated: the previous release runs on it. A
// worker of this tree started again afterwards leaves the routing alone.
func TestRollbackToThePreviousRelease(t *testing.T) {
	for _, kind := range upgradeKinds(false) {
		t.Run(kind.label(), func(t *testing.T) { rollbackAfterUpgrade(t, kind) })
	}
}

func rollbackAfterUpgrade(t *testing.T, kind temporalKind) {
	s, paths := previousSystem(t, kind)
	prev := s.bin
	l := newLoad(s)
	began := time.Now()
	var drained time.Duration
	underLoadAt(l, upgradeRate, func() {
		s.awaitWaiting(t)
		s.migrateTo(wdsBin)
		s.promoteWorkers(t, wdsBin, buildID)
		s.replaceServe(t, l, wdsBin)
		time.Sleep(dur(4*time.Second, 30*time.Second)) // this tree's chains now wait on the ladder too
		if s.openChainsOf(t, buildID) == 0 || s.openChainsOf(t, previousBuild) == 0 {
			t.Fatalf("before the rollback %d chains of %s and %d of %s are open; want both",
				s.openChainsOf(t, buildID), buildID, s.openChainsOf(t, previousBuild), previousBuild)
		}
		rollback := time.Now()
		s.setCurrent(t, previousBuild)
		s.replaceServe(t, l, prev)
		s.stopWorkersOfDrained(t, wdsBin, buildID)
		drained = time.Since(rollback)
		time.Sleep(dur(3*time.Second, 30*time.Second))
	})
	s.settle(t, l, kind.scenario(fmt.Sprintf("rollback to the previous release after a deploy, workers first: this tree's workers stopped once their chains ended (%v)",
		drained.Round(time.Second))), fmt.Sprintf("%d creates/s for %v", upgradeRate, time.Since(began).Round(time.Second)), paths...)
	s.upgradeChecks(t, previousBuild)
	s.ranOn(t, previousBuild, buildID)

	s.bin = wdsBin
	s.startWorker()
	time.Sleep(3 * time.Second)
	if current, err := s.currentBuild(); err != nil || current != previousBuild {
		t.Errorf("a worker of this tree started after the rollback made the current version %q (%v); it must leave the operator's choice", current, err)
	}
}

// ranOn fails the test unless workflows ran on each of the versions builds: a scenario that never
// handed work to one of them proved nothing about it.
func (s *system) ranOn(t *testing.T, builds ...string) {
	t.Helper()
	for _, build := range builds {
		if n := s.chainsOf(t, build); n == 0 {
			t.Errorf("no workflow ran on version %s: the scenario did not run both", build)
		}
	}
}

// openChainsOf counts the running workflows pinned to the deployment version of build.
func (s *system) openChainsOf(t *testing.T, build string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := s.temporal.client().CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Query: fmt.Sprintf("TemporalWorkerDeploymentVersion = 'wds:%s' AND ExecutionStatus = 'Running'", build)})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetCount()
}

// setCurrent routes new workflows to build's version, or to unversioned workers when build is empty,
// as `temporal worker deployment set-current-version` does.
func (s *system) setCurrent(t *testing.T, build string) {
	t.Helper()
	h := s.temporal.client().WorkerDeploymentClient().GetHandle("wds")
	// A minute, as awaitCurrent: on a loaded machine a new worker's first polls come late.
	deadline := time.Now().Add(time.Minute)
	for {
		// Refused until the server has seen the version's workers poll every task queue.
		_, err := h.SetCurrentVersion(context.Background(), client.WorkerDeploymentSetCurrentVersionOptions{BuildID: build})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("set the current version to %q: %v", build, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	s.awaitCurrent(t, build)
}

// stopWorkersOfDrained waits until no chain of build's version is open, as an operator waits for its
// drainage, then stops the workers running bin.
func (s *system) stopWorkersOfDrained(t *testing.T, bin, build string) {
	t.Helper()
	deadline := time.Now().Add(time.Duration(4*upgradeLadder())*time.Second + time.Minute)
	for s.openChainsOf(t, build) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d chains of version %s still open", s.openChainsOf(t, build), build)
		}
		time.Sleep(250 * time.Millisecond)
	}
	var kept []*proc
	for _, w := range s.workers {
		if w.bin != bin {
			kept = append(kept, w)
			continue
		}
		w.stop()
		s.retired = append(s.retired, w)
	}
	s.workers = kept
}

// otherBuildID is the version of this tree built with the delivery workflow of another shape (tag
// wdsothershape): a second versioned release whose histories this tree's code cannot replay.
const otherBuildID = "chaos-other"

var other struct {
	once sync.Once
	bin  string
	err  error
}

// otherShapeBinary builds that release once per test binary.
func otherShapeBinary(t *testing.T) string {
	t.Helper()
	other.once.Do(func() {
		other.bin = filepath.Join(binDir, "wds-other")
		out, err := exec.Command("go", "build", "-tags", "wdsothershape", "-ldflags", "-X main.version="+otherBuildID,
			"-o", other.bin, "wds/cmd/wds").CombinedOutput()
		if err != nil {
			other.err = fmt.Errorf("build wds with tag wdsothershape: %w: %s", err, out)
		}
	})
	if other.err != nil {
		t.Fatal(other.err)
	}
	return other.bin
}

// TestVersionsNeverReplayEachOther runs two versioned releases whose delivery workflows differ in
// shape: this tree's, then the other promoted while this tree's chains wait on the ladder, then a
// rollback to this tree's in the middle of the other's ladders, each version's workers kept until its
// chains ended. Had either version's chains been handed to the other's code, its tasks would fail on
// non-determinism: none does, and nothing is lost.
func TestVersionsNeverReplayEachOther(t *testing.T) {
	otherBin := otherShapeBinary(t)
	ladder := upgradeLadder()
	s := newSystemOf(t, wdsBin, time.Second, devServer(temporaldev.Options{}),
		fmt.Sprintf("WDS_WEBHOOK_RETRY_SCHEDULE=%ds,%ds", ladder, 2*ladder))
	s.startWorker()
	s.awaitCurrent(t, buildID)
	s.endpointWith(retryPath, failFirstAttempt, 5, upgradeHeaders)
	s.endpointWith(slowPath, answerSlowly, 1, upgradeHeaders)
	l := newLoad(s)
	began := time.Now()
	underLoadAt(l, upgradeRate, func() {
		s.awaitWaiting(t)
		s.bin = otherBin
		s.startWorker()
		s.setCurrent(t, otherBuildID)
		s.replaceServe(t, l, otherBin)
		time.Sleep(dur(4*time.Second, 30*time.Second)) // the other's chains now wait on the ladder too
		if s.openChainsOf(t, otherBuildID) == 0 || s.openChainsOf(t, buildID) == 0 {
			t.Fatalf("before the rollback %d chains of %s and %d of %s are open; want both",
				s.openChainsOf(t, otherBuildID), otherBuildID, s.openChainsOf(t, buildID), buildID)
		}
		s.setCurrent(t, buildID)
		s.bin = wdsBin
		s.replaceServe(t, l, wdsBin)
		s.stopWorkersOfDrained(t, otherBin, otherBuildID)
		time.Sleep(dur(3*time.Second, 30*time.Second))
	})
	s.settle(t, l, "two versioned releases with delivery workflows of different shapes: the other promoted, then rolled back mid-ladder",
		fmt.Sprintf("%d creates/s for %v", upgradeRate, time.Since(began).Round(time.Second)), retryPath, slowPath)
	s.upgradeChecks(t, buildID)
	s.ranOn(t, buildID, otherBuildID)
}

// chainsOf counts the workflows, open or closed, pinned to the deployment version of build.
func (s *system) chainsOf(t *testing.T, build string) int64 {
	t.Helper()
	res, err := s.temporal.client().CountWorkflow(context.Background(), &workflowservice.CountWorkflowExecutionsRequest{
		Query: fmt.Sprintf("TemporalWorkerDeploymentVersion = 'wds:%s'", build)})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetCount()
}
