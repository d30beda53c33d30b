package models

import (
	"time"

	"github.com/google/uuid"
)

// Endpoint is an outbound webhook endpoint. The signing secret is stored sealed (secrets.Box) and
// opened only to sign a delivery.
type Endpoint struct {
	ID           uuid.UUID `json:"id"`
	OrgID        uuid.UUID `json:"org_id"`
	URL          string    `json:"url" gorm:"column:url"`
	EventTypes   TextArray `json:"event_types" gorm:"type:text[]"`
	SecretSealed []byte    `json:"-"`
	// PreviousSecretSealed signs deliveries too until PreviousSecretUntil (a rotation's grace).
	PreviousSecretSealed []byte     `json:"-"`
	PreviousSecretUntil  *time.Time `json:"previous_secret_until,omitempty"`
	Enabled              bool       `json:"enabled"`
	MaxAttempts          int        `json:"max_attempts"`
	CreatedBy            uuid.UUID  `json:"created_by"`
	CreatedAt            time.Time  `json:"created_at" gorm:"default:clock_timestamp()"`
	UpdatedAt            time.Time  `json:"updated_at" gorm:"default:clock_timestamp()"`
	DeletedAt            *time.Time `json:"deleted_at,omitempty"`
}

// TableName is the endpoints table.
func (Endpoint) TableName() string { return "webhook_endpoints" }

// Delivery statuses (docs/webhooks.md).
const (
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
	DeliveryDropped   = "dropped"
)

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
	Status          string     `json:"status"`
	ResponseStatus  *int       `json:"response_status"`
	ResponseExcerpt string     `json:"response_excerpt"`
	Error           string     `json:"error"`
	DurationMS      int64      `json:"duration_ms" gorm:"column:duration_ms"`
	AttemptedAt     time.Time  `json:"attempted_at"`
	NextAttemptAt   *time.Time `json:"next_attempt_at"`
}

// TableName is the delivery log.
func (Delivery) TableName() string { return "webhook_deliveries" }

// Dispatch kinds: manual starts queued for the relay.
const (
	DispatchRefire = "refire"
	DispatchTest   = "test"
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
}

// TableName is the manual-start queue.
func (Dispatch) TableName() string { return "webhook_dispatches" }
