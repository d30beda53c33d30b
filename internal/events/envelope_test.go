package events_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"wds/internal/events"
	"wds/webhook"
)

// Every body schema describes webhook.Event, the one type wds encodes delivered bodies with: the
// same members, no others, and required exactly when the type always writes them.
func TestSchemasDescribeTheEventType(t *testing.T) {
	var names, required []string
	rt := reflect.TypeFor[webhook.Event]()
	for i := range rt.NumField() {
		name, opts, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
		if opts != "omitempty" {
			required = append(required, name)
		}
	}
	slices.Sort(names)
	slices.Sort(required)
	for _, k := range events.Catalog() {
		var s struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
			Additional *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(k.Schema(), &s); err != nil {
			t.Fatalf("%s: %v", k.Type, err)
		}
		if props := slices.Sorted(maps.Keys(s.Properties)); !slices.Equal(props, names) {
			t.Errorf("%s: the schema's properties are %v; webhook.Event's fields are %v", k.Type, props, names)
		}
		if got := slices.Sorted(slices.Values(s.Required)); !slices.Equal(got, required) {
			t.Errorf("%s: the schema requires %v; webhook.Event always writes %v", k.Type, got, required)
		}
		if s.Additional == nil || *s.Additional {
			t.Errorf("%s: the schema admits members webhook.Event does not have", k.Type)
		}
	}
}

// Bodies encoded from webhook.Event, as the outbox and an over-the-cap summary write them, pass
// their schemas.
func TestEncodedEventsPassTheirSchemas(t *testing.T) {
	v := validator(t)
	id, store := uuid1, uuid2
	created := time.Date(2026, 11, 25, 7, 0, 0, 123456000, time.UTC)
	for what, ev := range map[string]webhook.Event{
		"an event": {ID: &id, Type: events.VendorCreated, CreatedAt: created, OrgID: uuid2, StoreID: &store,
			Data: json.RawMessage(vendor)},
		"an event of the org": {ID: &id, Type: events.WebhookEndpointDisabled, CreatedAt: created, OrgID: uuid2,
			Data: json.RawMessage(`{"id":"` + uuid1 + `","org_id":"` + uuid2 + `","url":"https://hooks.example.com/in",
			"event_types":["order.created"],"enabled":false,"max_attempts":5,"rate_limit":null,"headers":{},
			"disabled_reason":"failing","health":{"last_success_at":null,"failing_since":"` + at + `",
			"consecutive_dropped":12,"succeeded_24h":0,"failed_24h":60},"created_by":"` + uuid1 + `","created_at":"` + at + `",
			"updated_at":"` + at + `","reason":"failing"}`)},
		"a summary": {ID: &id, Type: events.OrderCreated, CreatedAt: created, OrgID: uuid2, StoreID: &store,
			Summarized: true, Data: json.RawMessage(`{"id":"` + uuid1 + `"}`), Detail: "over the cap"},
		"a test event": {Type: events.WebhookTest, CreatedAt: created, OrgID: uuid2,
			Data: json.RawMessage(`{"endpoint_id":"` + uuid1 + `","message":"hello"}`)},
	} {
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := v.Validate(raw); err != nil {
			t.Errorf("%s: %v\n%s", what, err, raw)
		}
	}
}
