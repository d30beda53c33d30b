package workflows

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"wds/models"
	"wds/workflows/contract"
)

// A held attempt is asked again after its wait, on the workflow's clock, with the same delivery id
// and attempt number: the wait spends no attempt and shifts nothing but that attempt.
func TestAHeldAttemptWaitsOnATimerAndIsNotAnAttempt(t *testing.T) {
	holds := 3
	r := &receiver{targets: []contract.Target{target(2)}}
	r.decide = func(in contract.AttemptInput) contract.AttemptResult {
		if in.Attempt == 1 && holds > 0 {
			holds--
			return contract.AttemptResult{Outcome: models.StatusHeld, Wait: 700 * time.Millisecond}
		}
		if in.Attempt == 1 {
			return contract.AttemptResult{Outcome: models.StatusFailed, Error: "HTTP 500"}
		}
		return contract.AttemptResult{Outcome: models.StatusSucceeded}
	}
	start := runEvent(t, r, defaultSchedule)
	if len(r.attempts) != 5 {
		t.Fatalf("%d calls, want 3 held, the first attempt and the second", len(r.attempts))
	}
	first := r.attempts[0].in
	for i, a := range r.attempts[:4] {
		if a.in.DeliveryID != first.DeliveryID || a.in.Attempt != 1 {
			t.Errorf("call %d: delivery %s attempt %d, want the first attempt's id again", i, a.in.DeliveryID, a.in.Attempt)
		}
		if want := time.Duration(i) * 700 * time.Millisecond; a.at.Sub(start) != want {
			t.Errorf("call %d at %v, want %v", i, a.at.Sub(start), want)
		}
	}
	// The ladder stays anchored on the first call: attempt 2 is due a minute after it.
	if last := r.attempts[4]; last.in.Attempt != 2 || last.at.Sub(start) != time.Minute || last.in.DeliveryID == first.DeliveryID {
		t.Errorf("attempt 2: %+v at %v, want attempt 2 at +1m under a new id", last.in, last.at.Sub(start))
	}
}

// A recovery runs its batches a wait apart on the workflow's clock until a batch says it is done,
// and continues as new before its history grows long.
func TestARecoveryPacesItsBatchesAndEndsWhenOneIsDone(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(RecoveryWorkflow, workflow.RegisterOptions{Name: contract.RecoveryWorkflowName})
	var calls []time.Duration
	start := env.Now()
	env.RegisterActivityWithOptions(func(_ context.Context, p contract.RecoveryParams) (contract.RecoveryBatch, error) {
		calls = append(calls, env.Now().Sub(start))
		n := len(calls)
		return contract.RecoveryBatch{Status: models.RecoveryRunning, EndpointURL: "https://receiver.example/hook", Total: 40,
			Started: min(10*n, 40), Wait: 500 * time.Millisecond, Done: n == 5}, nil
	}, activity.RegisterOptions{Name: contract.ActivityRecoverBatch})
	env.ExecuteWorkflow(contract.RecoveryWorkflowName, contract.RecoveryParams{RecoveryID: uuid.New()})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("completed=%v err=%v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	want := []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second}
	if !slices.Equal(calls, want) {
		t.Fatalf("batches at %v, want %v", calls, want)
	}

	long := suite.NewTestWorkflowEnvironment()
	long.RegisterWorkflowWithOptions(RecoveryWorkflow, workflow.RegisterOptions{Name: contract.RecoveryWorkflowName})
	batches := 0
	long.RegisterActivityWithOptions(func(_ context.Context, p contract.RecoveryParams) (contract.RecoveryBatch, error) {
		batches++
		return contract.RecoveryBatch{Status: models.RecoveryRunning, Wait: time.Second}, nil
	}, activity.RegisterOptions{Name: contract.ActivityRecoverBatch})
	long.ExecuteWorkflow(contract.RecoveryWorkflowName, contract.RecoveryParams{RecoveryID: uuid.New()})
	var cont *workflow.ContinueAsNewError
	if !errors.As(long.GetWorkflowError(), &cont) || batches != batchesPerRun {
		t.Fatalf("after %d batches: %v, want to continue as new after %d", batches, long.GetWorkflowError(), batchesPerRun)
	}
}

// A held attempt waits once, until the place the activity reserved, and is asked again with that
// place (a reservation, not a poll). A held result without a place, as every one recorded before
// 72f7b51 is, is asked again without one, so the activity takes a new place: one path serves both.
func TestAHeldAttemptIsAskedAgainInItsOwnPlace(t *testing.T) {
	reserved := time.Date(2026, 11, 27, 12, 0, 30, 0, time.UTC)
	for _, place := range []*time.Time{&reserved, nil} {
		r := &receiver{targets: []contract.Target{target(1)}}
		r.decide = func(in contract.AttemptInput) contract.AttemptResult {
			if len(r.attempts) == 1 {
				return contract.AttemptResult{Outcome: models.StatusHeld, Wait: 30 * time.Second, SlotAt: place}
			}
			return contract.AttemptResult{Outcome: models.StatusSucceeded}
		}
		start := runEvent(t, r, defaultSchedule)
		if len(r.attempts) != 2 {
			t.Fatalf("held with place %v: %d calls, want the held one and one more", place, len(r.attempts))
		}
		first, again := r.attempts[0], r.attempts[1]
		if first.in.SlotAt != nil || again.in.DeliveryID != first.in.DeliveryID || again.in.Attempt != 1 {
			t.Errorf("held with place %v: asked first %+v, then %+v; want the same attempt again", place, first.in, again.in)
		}
		if again.at.Sub(start) != 30*time.Second || !reflect.DeepEqual(again.in.SlotAt, place) {
			t.Errorf("held with place %v: asked again at +%v with place %v, want +30s and the held place", place, again.at.Sub(start), again.in.SlotAt)
		}
	}
}
