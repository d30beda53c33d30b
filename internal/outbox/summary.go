package outbox

import (
	"encoding/json"
	"fmt"

	"wds/webhook"
)

// MaxBody is the largest event body delivered, and served by the event feed, as it is; a larger one
// goes out as its summary (docs/webhooks.md).
const MaxBody = 6_000_000

// SummaryHeadSQL is the SQL of a summary's envelope for an events row aliased alias: the stored body
// without its data, as text.
func SummaryHeadSQL(alias string) string { return "(" + alias + ".body::jsonb - 'data')::text" }

// SummaryDataIDSQL is the SQL of a summary's data id for an events row aliased alias: the id of the
// resource the body carries (a client's or vendor's own, a payment event's payment, a shipment
// event's order), as JSON text.
func SummaryDataIDSQL(alias string) string {
	b := alias + ".body->'data'"
	return "COALESCE(" + b + "->'id', " + b + "->'payment'->'id', " + b + "->'order'->'id', 'null')::text"
}

// Summary is the body sent in place of an event of size bytes, over MaxBody: the stored envelope
// (head, SummaryHeadSQL) marked summarized, with a detail and the resource's id (dataID,
// SummaryDataIDSQL) as its data.
func Summary(head, dataID string, size int64) ([]byte, error) {
	var env webhook.Event
	if err := json.Unmarshal([]byte(head), &env); err != nil {
		return nil, fmt.Errorf("decode the envelope to summarize: %w", err)
	}
	env.Summarized = true
	env.Data = json.RawMessage(`{"id":` + dataID + `}`)
	env.Detail = fmt.Sprintf("the event is %d bytes, over the %d-byte webhook payload cap; fetch the resource from the Read API", size, MaxBody)
	out, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode summary: %w", err)
	}
	return out, nil
}
