//go:build wdsothershape

package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// Built only into the test's second release (test/chaos, TestVersionsNeverReplayEachOther): a
// delivery workflow of another shape, which waits on a timer before its chains, so that a worker of
// either build replaying a history the other wrote fails its task on non-determinism.
func init() {
	beforeChains = func(ctx workflow.Context) error { return workflow.Sleep(ctx, time.Millisecond) }
}
