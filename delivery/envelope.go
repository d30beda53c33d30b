package delivery

import (
	"encoding/json"

	"github.com/google/uuid"
)

// Envelope is the JSON body of every delivered event (docs/webhooks.md); its fields go out in the
// struct's order. ID is nil only for a webhook.test event (X-PC-Event-Id: null). Summarized and
// Detail appear only on an event over MaxBody, whose Data then holds the resource's id alone.
type Envelope struct {
	ID         *uuid.UUID      `json:"id"`
	Type       string          `json:"type"`
	CreatedAt  string          `json:"created_at"`
	OrgID      uuid.UUID       `json:"org_id"`
	StoreID    *uuid.UUID      `json:"store_id"`
	Summarized bool            `json:"summarized,omitempty"`
	Data       json.RawMessage `json:"data"`
	Detail     string          `json:"detail,omitempty"`
}
