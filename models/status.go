// The delivery's statuses: an attempt's Status (its row, the Deliver activity's outcome, the
// metrics' outcome label), which a workflow's contract.WorkflowStatus (WdsDeliveryStatus) and an
// event's eventsearch.Outcome on the support desk reuse where they mean the same. Each is a string
// type: these values are in the database, in workflow histories and in every API answer, so their
// spelling never changes (docs/webhooks.md, docs/support.md).

package models

// Status is a delivery attempt's status (docs/webhooks.md): the status column of its row in the
// delivery log, and the outcome the Deliver activity reports to the workflow.
type Status string

// The statuses a row holds.
const (
	StatusSucceeded Status = "succeeded"
	// StatusFailed is a failed attempt that the chain retries.
	StatusFailed Status = "failed"
	// StatusDropped ends a chain undelivered: its last attempt failed, or the endpoint was disabled
	// or deleted, or the operator dropped the chain.
	StatusDropped Status = "dropped"
)

// Statuses no row holds.
const (
	// StatusEnqueued is a delivery queued and not attempted yet: the answer to a test event.
	StatusEnqueued Status = "enqueued"
	// StatusHeld is an attempt the endpoint's rate limit holds back: nothing was sent or recorded,
	// and the workflow asks again after AttemptResult.Wait on a durable timer. Waiting is never an
	// attempt.
	StatusHeld Status = "held"
)

// Recorded lists the statuses a row holds, in the order the filters offer them.
var Recorded = []Status{StatusSucceeded, StatusFailed, StatusDropped}

// Reasons a chain is dropped early (the delivery row's error).
const (
	ReasonEndpointDisabled = "endpoint_disabled"
	ReasonEndpointDeleted  = "endpoint_deleted"
)

// ReasonSecretUnreadable is a failed attempt's error when the worker's keys open neither the
// endpoint's signing secret nor its header set: nothing was sent, and the ladder goes on, so the
// next attempt after the keys are put right delivers.
const ReasonSecretUnreadable = "secret_unreadable"
