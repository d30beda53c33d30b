// The webhook engine's rows: endpoints, their health and headers, the delivery log, the queue of
// manual starts (dispatches) and the counters that number them, recoveries, the sends that pace a
// rate-limited endpoint, and the outbox's events.

package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Endpoint is an outbound webhook endpoint. The signing secret is stored sealed (secrets.Box) and
// opened only to sign a delivery.
type Endpoint struct {
	ID    uuid.UUID `json:"id"`
	OrgID uuid.UUID `json:"org_id"`
	URL   string    `json:"url" gorm:"column:url"`
	// Description says what the endpoint is for (at most 200 characters); nil when none.
	Description  *string   `json:"description"`
	EventTypes   TextArray `json:"event_types" gorm:"type:text[]"`
	SecretSealed []byte    `json:"-"`
	// PreviousSecretSealed signs deliveries too until PreviousSecretUntil (a rotation's grace).
	PreviousSecretSealed []byte     `json:"-"`
	PreviousSecretUntil  *time.Time `json:"previous_secret_until,omitempty"`
	Enabled              bool       `json:"enabled"`
	MaxAttempts          int        `json:"max_attempts"`
	// RateLimit is the most POSTs a second the endpoint receives; nil is no limit.
	RateLimit *int `json:"rate_limit"`
	// Headers are sent on every attempt, unsigned. As stored they are the names with blank values;
	// HeadersSealed holds the values (headers_sealed.go), which a view fills in for owners and admins.
	Headers       Headers `json:"headers" gorm:"type:jsonb"`
	HeadersSealed []byte  `json:"-"`
	// DisabledReason is why a disabled endpoint is: DisabledManual or DisabledFailing.
	DisabledReason *string `json:"disabled_reason"`
	// HealthResetAt is when it was last enabled: failures before it are not held against it.
	HealthResetAt *time.Time `json:"-"`
	// LastSuccessAt, FailingSince and ConsecutiveDropped are kept by each attempt's write
	// (delivery.RecordAttempt); Health shows them.
	LastSuccessAt      *time.Time `json:"-"`
	FailingSince       *time.Time `json:"-"`
	ConsecutiveDropped int64      `json:"-"`
	// UnrecoveredDropped and OldestUnrecoveredAt are the endpoint's unrecovered drops
	// (UnrecoveredDrop), kept by the database's triggers as chains drop and later chains start.
	UnrecoveredDropped  int64      `json:"-"`
	OldestUnrecoveredAt *time.Time `json:"-"`
	// Health is the view of the kept health with the 24-hour counts (delivery.FillHealth fills it).
	Health    *EndpointHealth `json:"health" gorm:"-"`
	CreatedBy uuid.UUID       `json:"created_by"`
	CreatedAt time.Time       `json:"created_at" gorm:"default:clock_timestamp()"`
	UpdatedAt time.Time       `json:"updated_at" gorm:"default:clock_timestamp()"`
	DeletedAt *time.Time      `json:"deleted_at,omitempty"`
	// LeaseUntil is when the lease of an endpoint `wds listen` registered ends unless its listener
	// renews it (endpoints.Renew); nil for an ordinary endpoint.
	LeaseUntil *time.Time `json:"-"`
}

// TableName is the endpoints table.
func (Endpoint) TableName() string { return "webhook_endpoints" }

// Why an endpoint is disabled.
const (
	DisabledManual  = "manual"
	DisabledFailing = "failing"
)

// EndpointHealth is how an endpoint has fared, as its attempts' writes kept it.
type EndpointHealth struct {
	LastSuccessAt *time.Time `json:"last_success_at"`
	// FailingSince is its first failed attempt after its last success (or its last enable); nil
	// while it is healthy.
	FailingSince       *time.Time `json:"failing_since"`
	ConsecutiveDropped int64      `json:"consecutive_dropped"`
	Succeeded24h       int64      `json:"succeeded_24h" gorm:"column:succeeded_24h"`
	Failed24h          int64      `json:"failed_24h" gorm:"column:failed_24h"`
	// UnrecoveredDropped counts the endpoint's unrecovered drops (UnrecoveredDrop), which a success
	// does not end; OldestUnrecoveredAt is the oldest one's drop, nil when there is none.
	UnrecoveredDropped  int64      `json:"unrecovered_dropped"`
	OldestUnrecoveredAt *time.Time `json:"oldest_unrecovered_at"`
}

// UnrecoveredDrop is a chain that dropped and has no later chain of the same event to the same
// endpoint: no re-fire, resend or recovery since. The receiver still misses that event. Kept by the
// database's triggers (migration 00035): added as the chain drops, removed as a later chain of its
// event to the endpoint is queued or as the retention job deletes the dropped attempt. A recovery
// re-fires exactly these.
type UnrecoveredDrop struct {
	DeliveryID uuid.UUID `gorm:"primaryKey"`
	EndpointID uuid.UUID
	EventID    uuid.UUID
	DroppedAt  time.Time
}

// TableName is the unrecovered drops table.
func (UnrecoveredDrop) TableName() string { return "webhook_unrecovered_drops" }

// EndpointMinute counts an endpoint's attempts of one minute, for the health's 24-hour counts and
// the console's 7-day charts. Kept by each attempt's write (a drop of a waiting chain and a drop's
// re-fire count in the minute of the dropped attempt); the retention job deletes minutes older than
// 8 days, and folds those older than the health's day into one row an hour, at the hour's start
// (delivery.FoldMinutes): a row's Minute is where its counts begin, and readers sum over ranges.
type EndpointMinute struct {
	EndpointID uuid.UUID
	OrgID      uuid.UUID
	Minute     time.Time
	Succeeded  int64
	// Failed counts every attempt that did not succeed, Dropped those of them that ended a chain.
	Failed  int64
	Dropped int64
	// Refired counts the first attempts of re-fired and recovered chains; DroppedRefired the drops
	// re-fired since (by hand or by a recovery).
	Refired        int64
	DroppedRefired int64
}

// TableName is the minutes table.
func (EndpointMinute) TableName() string { return "webhook_endpoint_minutes" }

// Headers are an endpoint's custom request headers, a jsonb object of name to value.
type Headers map[string]string

// Scan reads the jsonb column.
func (h *Headers) Scan(src any) error {
	raw, err := columnBytes(src, "headers")
	if err != nil {
		return err
	}
	out := Headers{}
	if raw == nil {
		*h = out
		return nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("scan headers: %w", err)
	}
	*h = out
	return nil
}

// Value writes the object; nil is the empty object, as the column is NOT NULL.
func (h Headers) Value() (driver.Value, error) {
	if h == nil {
		return "{}", nil
	}
	raw, err := json.Marshal(map[string]string(h))
	if err != nil {
		return nil, fmt.Errorf("encode headers: %w", err)
	}
	return string(raw), nil
}

// MarshalJSON writes nil as {}, so every view shows an object.
func (h Headers) MarshalJSON() ([]byte, error) {
	if h == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(map[string]string(h))
}

// Delivery is one attempt to deliver one event to one endpoint.
type Delivery struct {
	ID              uuid.UUID  `json:"id"`
	OrgID           uuid.UUID  `json:"-"`
	EventID         uuid.UUID  `json:"event_id"`
	EndpointID      uuid.UUID  `json:"endpoint_id"`
	EventType       string     `json:"event_type"`
	ChainID         uuid.UUID  `json:"chain_id"`
	WorkflowID      string     `json:"workflow_id"`
	Attempt         int        `json:"attempt"`
	Status          Status     `json:"status"`
	ResponseStatus  *int       `json:"response_status"`
	ResponseExcerpt string     `json:"response_excerpt"`
	Error           string     `json:"error"`
	DurationMS      int64      `json:"duration_ms" gorm:"column:duration_ms"`
	AttemptedAt     time.Time  `json:"attempted_at"`
	NextAttemptAt   *time.Time `json:"next_attempt_at"`
	// Sent is the headers the attempt's POST carried, as recorded (nil: it sent nothing, or it was
	// recorded before they were); RequestHeaders is them as the reader may see them, filled in by
	// the reads of one attempt (deliverylog.Service.Delivery and eventsearch.Service.Event) and left out of lists.
	Sent           *RequestHeaders `json:"-" gorm:"column:request_headers"`
	RequestHeaders Headers         `json:"request_headers,omitempty" gorm:"-"`
	// RefiredChainID and RefiredWorkflowID name the fresh chain a dropped row was re-fired into
	// (omitted until it is). They are read from the re-fire's dispatch (deliverylog.LogPage), never written.
	RefiredChainID    *uuid.UUID `json:"refired_chain_id,omitempty" gorm:"->"`
	RefiredWorkflowID *string    `json:"refired_workflow_id,omitempty" gorm:"->"`
}

// TableName is the delivery log.
func (Delivery) TableName() string { return "webhook_deliveries" }

// Dispatch kinds: manual starts queued for the relay.
const (
	DispatchRefire   = "refire"
	DispatchTest     = "test"
	DispatchResend   = "resend"
	DispatchRecovery = "recovery"
)

// Dispatch is a re-fire or test event waiting for its workflow to be started.
type Dispatch struct {
	ID         uuid.UUID
	OrgID      uuid.UUID
	Kind       string
	WorkflowID string
	EventID    uuid.UUID
	EndpointID uuid.UUID
	ChainID    uuid.UUID
	DeliveryID *uuid.UUID
	// RefiredDeliveryID is the dropped delivery a re-fire answers; each is re-fired at most once.
	RefiredDeliveryID *uuid.UUID
	CreatedBy         *uuid.UUID
	CreatedAt         time.Time `gorm:"default:clock_timestamp()"`
	DispatchedAt      *time.Time
	// RelayLeaseUntil is set while a relay is starting the workflow (worker's lease).
	RelayLeaseUntil *time.Time
	// RecoveryID is the recovery that queued the chain, if one did.
	RecoveryID *uuid.UUID
}

// TableName is the manual-start queue.
func (Dispatch) TableName() string { return "webhook_dispatches" }

// RelayClaim is a relay's claim of the rows it is starting, one row a batch: other relays leave the
// rows named in RowIDs (of the table Source: events or webhook_dispatches) alone until the relay's
// mark deletes the claim, or until Until, should the relay die first.
type RelayClaim struct {
	ID     uuid.UUID
	Source string
	RowIDs TextArray
	Until  time.Time
}

// Event is an outbox row: written with the business rows, delivered by the webhook engine.
type Event struct {
	ID        uuid.UUID
	OrgID     uuid.UUID
	StoreID   *uuid.UUID
	Type      string
	Body      []byte    `gorm:"type:json"`
	CreatedAt time.Time `gorm:"default:clock_timestamp()"`
	// DispatchedAt, Outcome and ChainsTotal are written with the event and no longer kept after it
	// (migrations/00050_event_states_written.sql): an event's state is read from EventState. The next
	// release drops them.
	DispatchedAt *time.Time
	// RelayLeaseUntil is set while a relay is starting the event's workflow (worker's lease).
	RelayLeaseUntil *time.Time
	// OrderID and ResourceID are the order and the resource the event is about, which PostgreSQL
	// reads from the body (generated columns): never written.
	OrderID     *uuid.UUID `gorm:"->"`
	ResourceID  *uuid.UUID `gorm:"->"`
	Outcome     string     `gorm:"->"`
	ChainsTotal int        `gorm:"->"`
	// XactID is the transaction that wrote the event, the event feed's order (internal/feed): the
	// column's default fills it, and it is never written here.
	XactID string `gorm:"->"`
}

// EventState is what changes about an event after it is written, in a narrow row of its own so
// that a delivery does not rewrite the event's (migrations/00049_event_states.sql): the support
// desk's outcome and chain count, kept by triggers on the delivery log and the dispatches, and when
// the relay dispatched it (outbox.Events.Mark). Never written here.
type EventState struct {
	EventID      uuid.UUID  `gorm:"primaryKey;->"`
	OrgID        uuid.UUID  `gorm:"->"`
	CreatedAt    time.Time  `gorm:"->"`
	Listed       bool       `gorm:"->"`
	Outcome      string     `gorm:"->"`
	ChainsTotal  int        `gorm:"->"`
	DispatchedAt *time.Time `gorm:"->"`
}

// Recovery statuses.
const (
	RecoveryRunning   = "running"
	RecoveryCompleted = "completed"
	RecoveryCancelled = "cancelled"
)

// Recovery is one recovery and its progress.
type Recovery struct {
	ID         uuid.UUID `json:"id"`
	OrgID      uuid.UUID `json:"-"`
	EndpointID uuid.UUID `json:"endpoint_id"`
	Since      time.Time `json:"since"`
	Until      time.Time `json:"until"`
	Status     string    `json:"status"`
	Total      int       `json:"total"`
	// Skipped counts the window's dropped chains whose event already went to the endpoint again
	// after they dropped (recovery.RecoveryCount).
	Skipped int `json:"skipped"`
	Started int `json:"started"`
	// Succeeded, Retrying and Dropped are how the chains it started stand now (their last
	// attempts); recovery.Service fills them.
	Succeeded  int        `json:"succeeded" gorm:"-"`
	Retrying   int        `json:"retrying" gorm:"-"`
	Dropped    int        `json:"dropped" gorm:"-"`
	WorkflowID string     `json:"workflow_id"`
	CreatedBy  *uuid.UUID `json:"-"`
	CreatedAt  time.Time  `json:"created_at" gorm:"default:clock_timestamp()"`
	FinishedAt *time.Time `json:"finished_at"`
	// DispatchedAt is set once the recovery's workflow is started; the relay starts what a crash
	// left unstarted.
	DispatchedAt *time.Time `json:"-"`
	// AfterAt and AfterID are the last dropped row a batch took (nil before the first): the next
	// batch continues after it.
	AfterAt *time.Time `json:"-"`
	AfterID *uuid.UUID `json:"-"`
}

// Running reports whether the recovery is still starting chains (templates ask it rather than spell
// the status).
func (r Recovery) Running() bool { return r.Status == RecoveryRunning }

// TableName is the recoveries table.
func (Recovery) TableName() string { return "webhook_recoveries" }

// RefireCounter numbers an (event, endpoint)'s manual chains (re-fires, resends, recovered chains):
// the <n> of their workflow ids, incremented by an upsert as each is queued.
type RefireCounter struct {
	EventID    uuid.UUID `gorm:"primaryKey"`
	EndpointID uuid.UUID `gorm:"primaryKey"`
	N          int
}

// TableName is the counters table.
func (RefireCounter) TableName() string { return "webhook_refire_counters" }

// EndpointSend is one POST to a rate-limited endpoint within the last second: every worker takes its
// place here, under the endpoint's advisory lock, before sending (activities' pace). The table has no
// key and is unlogged: a crash forgets a second of sends at most.
type EndpointSend struct {
	EndpointID uuid.UUID
	SentAt     time.Time
}

// TableName is the sends table.
func (EndpointSend) TableName() string { return "webhook_endpoint_sends" }
