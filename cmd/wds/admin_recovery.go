package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/uuid"

	"wds/internal/recovery"
	"wds/models"
)

func init() {
	registerAdmin("endpoint recover", "re-fire every chain dropped at an endpoint since a time", endpointRecover)
	registerAdmin("recovery show", "a recovery's progress", recoveryShow)
	registerAdmin("recovery cancel", "stop a running recovery", recoveryCancel)
}

// recoveryPoll is how often --wait reads a recovery's progress.
const recoveryPoll = time.Second

// progressOut is where --wait reports progress: stderr, so stdout stays one JSON object.
var progressOut io.Writer = os.Stderr

// endpointRecover asks for a recovery; the worker's relay starts its workflow within seconds. With
// --wait it reports the progress on stderr until the recovery ends, then prints it.
func endpointRecover(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "endpoint id"), uuidFlag(fs, "actor", "acting user id")
	since := stringFlag(fs, "since", "re-fire chains dropped at or after this time (RFC 3339)")
	until := fs.String("until", "", "and before this time (RFC 3339; default now)")
	wait := fs.Bool("wait", false, "report progress on stderr until the recovery ends")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		from, err := optionalTime("since", *since)
		if err != nil {
			return nil, err
		}
		to, err := optionalTime("until", *until)
		if err != nil {
			return nil, err
		}
		svc, _ := recoveryService(env)
		rec, err := svc.Recover(ctx, *id, *actor, *from, to)
		if err != nil {
			return nil, err
		}
		if rec.Total == 0 {
			fmt.Fprintln(progressOut, recoverySummary(rec))
			return rec, nil
		}
		if !*wait {
			return rec, nil
		}
		return waitForRecovery(ctx, svc, rec.ID)
	}
}

// recoveryService is the recoveries; they need no encryption key.
func recoveryService(env *adminEnv) (*recovery.Service, error) {
	svc, err := env.services(false)
	if err != nil {
		return nil, err
	}
	return svc.recoveries, nil
}

// recoverySummary is a recovery's progress in a line, with what it skipped and why.
func recoverySummary(rec *models.Recovery) string {
	line := fmt.Sprintf("recovery %s: %d of %d chains started, %s", rec.ID, rec.Started, rec.Total, rec.Status)
	if rec.Total == 0 {
		line = fmt.Sprintf("recovery %s: nothing to recover since %s", rec.ID, rec.Since.Format(time.RFC3339))
	}
	if rec.Skipped > 0 {
		line += fmt.Sprintf(" (skipped %d dropped chains whose event already went to the endpoint again after the drop)", rec.Skipped)
	}
	return line
}

// waitForRecovery reports a recovery's progress whenever it changes until it is no longer running.
func waitForRecovery(ctx context.Context, svc *recovery.Service, id uuid.UUID) (*models.Recovery, error) {
	last := -1
	for {
		rec, err := svc.Recovery(ctx, id, nil)
		if err != nil {
			return nil, err
		}
		if rec.Started != last || rec.Status != models.RecoveryRunning {
			fmt.Fprintln(progressOut, recoverySummary(rec))
			last = rec.Started
		}
		if rec.Status != models.RecoveryRunning {
			return rec, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped waiting; the recovery runs on (wds admin recovery show --id %s): %w", id, ctx.Err())
		case <-time.After(recoveryPoll):
		}
	}
}

func recoveryShow(fs *flag.FlagSet) runFunc {
	id := uuidFlag(fs, "id", "recovery id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		svc, _ := recoveryService(env)
		return svc.Recovery(ctx, *id, nil)
	}
}

func recoveryCancel(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "recovery id"), uuidFlag(fs, "actor", "acting user id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		svc, _ := recoveryService(env)
		return svc.CancelRecovery(ctx, *id, *actor)
	}
}
