package recovery

import "wds/internal/platform/problem"

// ErrRecoveryInProgress refuses a second recovery of an endpoint while one runs.
var ErrRecoveryInProgress = problem.New(problem.Conflict, "recovery_in_progress", "a recovery of this endpoint is still running")
