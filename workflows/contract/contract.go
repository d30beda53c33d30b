// Package contract is what workflow history records, in one place for the workflows, the
// activities, the starter and the Temporal UI: the task queue, workflow and activity type names, the
// signal, the search attributes, the workflow ids, and the inputs and results that go into history,
// with the workflow's status. Every name here is recorded in running workflows' histories: changing
// one breaks their replay.
package contract

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"wds/models"
)

// TaskQueue is where fresh deliveries (each event's own workflow) and test sends run, with their
// activities (docs/webhooks.md).
const TaskQueue = "wds-webhooks"

// ManualTaskQueue is where re-fires, resends and recoveries run, with their activities: a worker
// serves it with slots of its own (WDS_MANUAL_ACTIVITIES), so however many chains an org's recovery
// starts they never take the slots fresh deliveries need (docs/support.md).
const ManualTaskQueue = "wds-webhooks-manual"

const (
	// AttemptTimeout bounds one attempt: the 10 s request plus loading the body and writing the row.
	AttemptTimeout = 30 * time.Second
	// TaskTimeout is the workflow task timeout starters give every delivery workflow. A local attempt
	// runs inside its workflow task; past 80 % of the task's timeout the SDK completes the task early
	// and asks for another, three more history events and a round trip per slow attempt. At twice
	// the attempt's timeout no attempt reaches that point. The price: a task in flight on a worker
	// that is killed (not stopped) is handed to another worker after this long, not after 10 s.
	TaskTimeout = 2 * AttemptTimeout
	// EarlyTaskCompletion is when the Go SDK completes a delivery's workflow task whose local
	// activities still run, and asks for another: 80 % of the task's timeout.
	EarlyTaskCompletion = TaskTimeout * 8 / 10
)

// CurrentDesign is the version of the delivery workflow's "attempt" change (workflows.ChangeAttempt)
// a starter chooses for the chains it starts (EventParams.Design), and so its newest version: a new
// way of running attempts is added here. A worker of the release before starters chose it ignores
// the field: running such a workflow's first task it asks workflow.GetVersion live and gets its own
// newest version, this same design, so it sends what this code would; replaying a later task it
// finds no marker, takes its oldest path and fails the task on the mismatch, which Temporal retries
// until a worker of this release takes it. Since workers are versioned a chain is pinned to the
// release that started it, so this is history (docs/production.md, Deploys and rollbacks).
const CurrentDesign = 3

// Workflow type names, stable because running workflows are bound to them. An event whose chains
// the starter planned runs as PlannedEventWorkflowName (the same function): a worker of an older wds,
// which would ignore the plan and record another history, does not know that type, so it never runs
// one whose later replay on this code would fail, during a rolling deploy or a rollback.
// workflow.GetVersion cannot say this: an older worker has no GetVersion call to respect, and its
// marker would add an event to every delivery's history.
const (
	EventWorkflowName        = "WebhookEvent"
	PlannedEventWorkflowName = "WebhookEventPlanned"
	RefireWorkflowName       = "WebhookRefire"
	TestWorkflowName         = "WebhookTest"
)

// Activity type names: the Activities methods' own names, which the SDK derives from the workflows'
// method references (acts.Deliver); registered under exactly these names by the worker.
const (
	ActivityResolveTargets = "ResolveTargets"
	ActivityDeliver        = "Deliver"
	ActivityRecordLost     = "RecordLostAttempt"
	ActivityRecordFailed   = "RecordFailedAttempt"
)

// SignalEndpointStopped tells a delivery workflow that an endpoint (the uuid.UUID payload) was
// disabled or deleted: its chains stop waiting and make their next attempt at once, which the
// activity turns into the chain's end without sending.
const SignalEndpointStopped = "endpoint-stopped"

// Search attributes (docs/webhooks.md) so operators filter deliveries in the Temporal UI.
var (
	AttrOrgID          = temporal.NewSearchAttributeKeyKeyword("WdsOrgId")
	AttrEventID        = temporal.NewSearchAttributeKeyKeyword("WdsEventId")
	AttrEventType      = temporal.NewSearchAttributeKeyKeyword("WdsEventType")
	AttrDeliveryStatus = temporal.NewSearchAttributeKeyKeyword("WdsDeliveryStatus")
	AttrEndpointIDs    = temporal.NewSearchAttributeKeyKeywordList("WdsEndpointIds")
	// The order an event is about: its number, what a person quotes, and its id. Set at start on
	// the workflows of events about an order.
	AttrOrderNumber = temporal.NewSearchAttributeKeyInt64("WdsOrderNumber")
	AttrOrderID     = temporal.NewSearchAttributeKeyKeyword("WdsOrderId")
)

// SearchAttributeKeys lists every custom search attribute, for registration on a server.
func SearchAttributeKeys() []temporal.SearchAttributeKey {
	return append([]temporal.SearchAttributeKey{AttrOrgID, AttrEventID, AttrEventType, AttrDeliveryStatus, AttrEndpointIDs},
		OptionalSearchAttributeKeys()...)
}

// OptionalSearchAttributeKeys are the attributes added after the first release: a namespace that
// lacks them (one whose attributes the worker may not add, such as Temporal Cloud's) still gets every
// delivery, started without them. Every start carries the others, so they are required.
func OptionalSearchAttributeKeys() []temporal.SearchAttributeKey {
	return []temporal.SearchAttributeKey{AttrOrderNumber, AttrOrderID}
}

// Workflow ids (docs/webhooks.md).
func EventWorkflowID(eventID uuid.UUID) string { return "webhook-event/" + eventID.String() }

// RefireWorkflowID names the n-th manual re-fire of one event to one endpoint.
func RefireWorkflowID(eventID, endpointID uuid.UUID, n int) string {
	return "webhook-refire/" + eventID.String() + "/" + endpointID.String() + "/" + strconv.Itoa(n)
}

// TestWorkflowID names a synthetic test delivery.
func TestWorkflowID(deliveryID uuid.UUID) string { return "webhook-test/" + deliveryID.String() }

// EventParams starts the workflow of one event. Schedule is the retry ladder in force when the event
// was started, so a configuration change never alters a running chain's history. Chains are the
// event's targets with the ids of their chains and first attempts, planned by the starter so the
// workflow records nothing before its first attempts; they are empty when the starter planned none
// (an older wds, or no endpoint enabled at the start), and the workflow then resolves its targets.
type EventParams struct {
	EventID   uuid.UUID
	OrgID     uuid.UUID
	EventType string
	// Schedule is the ladder as workflows started before RetrySchedule carry it (nanoseconds).
	Schedule      []time.Duration `json:",omitempty"`
	RetrySchedule Durations       `json:",omitempty"`
	Chains        []PlannedChain
	// Design is the version of the delivery code (workflows.ChangeAttempt) the starter chose for the
	// chain, so the workflow asks workflow.GetVersion nothing: its marker and TemporalChangeVersion
	// upsert were two of the nine events of a delivery's history. Zero in workflows started before
	// starters chose it, which ask.
	Design int `json:",omitempty"`
}

// Ladder is the retry schedule the workflow was started with, in either form.
func (p EventParams) Ladder() []time.Duration { return ladder(p.RetrySchedule, p.Schedule) }

// PlannedChain is one target of an event and the ids of its chain and of its first attempt.
type PlannedChain struct {
	Target
	ChainID         uuid.UUID
	FirstDeliveryID uuid.UUID
}

// RefireParams starts a fresh chain of one event to one endpoint.
type RefireParams struct {
	EventID    uuid.UUID
	OrgID      uuid.UUID
	EventType  string
	EndpointID uuid.UUID
	ChainID    uuid.UUID
	// Schedule, RetrySchedule and Design are as in EventParams.
	Schedule      []time.Duration `json:",omitempty"`
	RetrySchedule Durations       `json:",omitempty"`
	Design        int             `json:",omitempty"`
}

// Ladder is the retry schedule the workflow was started with, in either form.
func (p RefireParams) Ladder() []time.Duration { return ladder(p.RetrySchedule, p.Schedule) }

// TestParams sends one synthetic webhook.test event; DeliveryID was announced to the caller.
type TestParams struct {
	EventID    uuid.UUID
	OrgID      uuid.UUID
	EndpointID uuid.UUID
	ChainID    uuid.UUID
	DeliveryID uuid.UUID
	Design     int `json:",omitempty"` // as in EventParams
}

// ResolveInput asks for the delivery targets of an event: every subscribed endpoint, or just
// EndpointID when set (re-fire, test).
type ResolveInput struct {
	EventID    uuid.UUID
	EndpointID *uuid.UUID
}

// Target is one endpoint a chain delivers to.
type Target struct {
	EndpointID  uuid.UUID
	URL         string
	MaxAttempts int
}

// AttemptInput is one delivery attempt. DeliveryID is fixed before the attempt (by the starter for a
// planned chain's first attempt, by the workflow otherwise), so a retried activity task writes the
// same row. NextAttemptAt is when the chain's next attempt is due should this one
// fail; nil on the last attempt, whose failure drops the chain.
type AttemptInput struct {
	DeliveryID    uuid.UUID
	EventID       uuid.UUID
	EndpointID    uuid.UUID
	ChainID       uuid.UUID
	WorkflowID    string
	Attempt       int
	NextAttemptAt *time.Time
	// Test marks the synthetic event: X-PC-Event-Id is the literal null.
	Test bool
	// ReportFailure asks the activity to fail, once the attempt is recorded, when the receiver failed
	// it (FailedAttempt), so the Temporal UI shows a failed attempt as a failed activity. Chains from
	// before workflows.AttemptFails take every outcome as a result, and leave it false.
	ReportFailure bool `json:",omitempty"`
	// SlotAt is the place under the endpoint's rate limit a held attempt reserved: asked again at
	// that time, the attempt sends in it without asking for another.
	SlotAt *time.Time `json:",omitempty"`
	// HandOffFailure (since workflows.AttemptRecorded, local attempts) asks Deliver to return a failed
	// attempt as its result, with what the POST came back with when its row could not be written
	// (AttemptResult.Unrecorded), rather than keep that in the worker's memory: the workflow hands it on to
	// RecordFailedAttempt, a regular activity, which records it and fails for the Temporal UI.
	HandOffFailure bool `json:",omitempty"`
}

// AttemptResult is the outcome of an attempt: the status it recorded in its row (succeeded, failed,
// or dropped), or StatusHeld, when the endpoint's rate limit held it back unrecorded.
type AttemptResult struct {
	Outcome models.Status
	Error   string
	// ResponseStatus is the receiver's HTTP status, when it answered.
	ResponseStatus *int `json:",omitempty"`
	// Wait is how long a held attempt waits before it asks again.
	Wait time.Duration
	// SlotAt is the place a held attempt reserved, Wait from now (AttemptInput.SlotAt).
	SlotAt *time.Time `json:",omitempty"`
	// Unrecorded is what a failed attempt's POST came back with when its row could not be written
	// (HandOffFailure): RecordFailedAttempt writes it.
	Unrecorded *Sent `json:",omitempty"`
}

// ReceiverFailed tells an attempt the receiver failed (an answer other than 2xx, a timeout, a TLS or
// network error) from one that succeeded or stopped without sending (its endpoint disabled or
// deleted), which failed nothing.
func (r AttemptResult) ReceiverFailed() bool {
	return (r.Outcome == models.StatusFailed || r.Outcome == models.StatusDropped) &&
		r.Error != models.ReasonEndpointDisabled && r.Error != models.ReasonEndpointDeleted
}

// Sent is what an attempt's POST came back with: the row's fields that the attempt's input does not
// give.
type Sent struct {
	Status          models.Status
	ResponseStatus  *int
	ResponseExcerpt string
	Error           string
	DurationMS      int64
	AttemptedAt     time.Time
	NextAttemptAt   *time.Time
	// Headers are the headers the POST carried (custom values sealed), for the row.
	Headers *models.RequestHeaders `json:",omitempty"`
}

// FailedAttemptInput is RecordFailedAttempt's input: the attempt and the result its Deliver returned.
type FailedAttemptInput struct {
	Attempt AttemptInput
	Result  AttemptResult
}

// ErrTypeAttemptFailed is the failure type of a Deliver activity whose POST the receiver failed
// (an answer other than 2xx, a timeout, a TLS or network error). It is non-retryable: the ladder, not
// Temporal's activity retry, decides what follows, and the attempt is already recorded.
const ErrTypeAttemptFailed = "AttemptFailed"

// AttemptFailure is the activity's failure for an attempt the receiver failed: its message says what
// the receiver did (HTTP 500, timeout) and what follows, and its details are the attempt's result.
func AttemptFailure(in AttemptInput, res AttemptResult) error {
	next := "the chain is dropped"
	if in.NextAttemptAt != nil {
		next = "next attempt at " + in.NextAttemptAt.UTC().Format(time.RFC3339)
	}
	msg := fmt.Sprintf("attempt %d %s: %s; %s", in.Attempt, res.Outcome, res.Error, next)
	// Benign: a receiver failing is the service's everyday work, not wds's error, so the SDK logs it
	// at debug level rather than as an error on every failed attempt, and its failure metrics skip it.
	return temporal.NewApplicationErrorWithOptions(msg, ErrTypeAttemptFailed, temporal.ApplicationErrorOptions{
		NonRetryable: true, Details: []any{res}, Category: temporal.ApplicationErrorCategoryBenign})
}

// FailedAttempt is the result an AttemptFailure carries, and false for any other error.
func FailedAttempt(err error) (AttemptResult, bool) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrTypeAttemptFailed {
		return AttemptResult{}, false
	}
	var res AttemptResult
	if app.Details(&res) != nil {
		return AttemptResult{}, false
	}
	return res, true
}

// LostAttempt records an attempt whose Deliver activity failed without recording an outcome (the
// worker died, the database was unreachable), so every attempt still has exactly one row.
type LostAttempt struct {
	Attempt AttemptInput
	Error   string
}

// WorkflowStatus is how a delivery workflow stands across its chains: the value of its
// WdsDeliveryStatus search attribute and its Result's status.
type WorkflowStatus string

// WdsDeliveryStatus values.
const (
	WorkflowDelivering       WorkflowStatus = "delivering"
	WorkflowSucceeded                       = WorkflowStatus(models.StatusSucceeded)
	WorkflowDropped                         = WorkflowStatus(models.StatusDropped)
	WorkflowPartiallyDropped WorkflowStatus = "partially_dropped"
)

// Result is how a delivery workflow ended: the overall status (WdsDeliveryStatus's value) and each
// chain's outcome. A workflow that reached every endpoint returns it; one that dropped a chain fails
// with it as its error's details (DroppedResult).
type Result struct {
	Status WorkflowStatus `json:"status"`
	Chains []ChainResult  `json:"chains"`
}

// ChainResult is how one chain ended: succeeded, or dropped after its last attempt.
type ChainResult struct {
	EndpointID uuid.UUID     `json:"endpoint_id"`
	URL        string        `json:"url"`
	Outcome    models.Status `json:"outcome"`
}

// ErrTypeDropped is the failure type of a delivery workflow that dropped at least one chain.
const ErrTypeDropped = "DeliveryDropped"

// DroppedResult is the Result a workflow failed by droppedError carries, and false for any other
// error: how a caller reading a finished delivery workflow gets every chain's outcome either way.
func DroppedResult(err error) (Result, bool) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrTypeDropped {
		return Result{}, false
	}
	var res Result
	if app.Details(&res) != nil {
		return Result{}, false
	}
	return res, true
}

// Recovery workflow and activity names, stable because running workflows are bound to them.
const (
	RecoveryWorkflowName = "WebhookRecovery"
	ActivityRecoverBatch = "RecoverBatch"
)

// RecoveryParams starts a recovery's workflow.
type RecoveryParams struct {
	RecoveryID uuid.UUID
}

// RecoveryBatch is what one batch did: the recovery's progress, and how long the workflow waits
// before the next batch so the starts keep to the pace. Done ends the workflow.
type RecoveryBatch struct {
	Status      string
	EndpointURL string
	Total       int
	Started     int
	Wait        time.Duration
	Done        bool
	// Took is the batch's transaction, which takes and queues its chains: its cost, apart from the
	// starts it then spreads over its second.
	Took time.Duration `json:",omitempty"`
}

// RecoveryWorkflowID names a recovery's workflow.
func RecoveryWorkflowID(id uuid.UUID) string { return "recover-" + id.String() }

// ResendWorkflowID names the chain of the n-th manual start of one event to one endpoint, a resend.
func ResendWorkflowID(eventID, endpointID uuid.UUID, n int) string {
	return ManualWorkflowID(models.DispatchResend, eventID, endpointID, n)
}

// RefiredChain reports whether a chain's workflow id is a re-fire's or a recovery's: a fresh chain
// started from a dropped one (resends, which start from any event, are not).
func RefiredChain(workflowID string) bool {
	return strings.HasPrefix(workflowID, "webhook-"+models.DispatchRefire+"/") ||
		strings.HasPrefix(workflowID, "webhook-"+models.DispatchRecovery+"/")
}

// ManualWorkflowID names the chain of the n-th manual start (re-fires, resends and recoveries share
// the count) of one event to one endpoint: webhook-resend/... or webhook-recovery/...
func ManualWorkflowID(kind string, eventID, endpointID uuid.UUID, n int) string {
	return fmt.Sprintf("webhook-%s/%s/%s/%d", kind, eventID, endpointID, n)
}
