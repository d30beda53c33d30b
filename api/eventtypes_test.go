package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"wds/api/openapi"
	"wds/internal/events"
	"wds/internal/events/eventstest"
)

// GET /v1/event-types needs no key and lists all 14 types with a description and a schema that a
// JSON Schema library compiles.
func TestEventTypesCatalogIsServedWithSchemas(t *testing.T) {
	e := newReadEnv(t)
	status, body := e.get("/v1/event-types", "")
	if status != http.StatusOK {
		t.Fatalf("event-types: %d %s", status, body)
	}
	var out struct {
		Rows []struct {
			Type        string          `json:"type"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	schemas := map[string]json.RawMessage{}
	var types []string
	for _, r := range out.Rows {
		if r.Description == "" {
			t.Errorf("%s has no description", r.Type)
		}
		types = append(types, r.Type)
		schemas[r.Type] = r.Schema
	}
	want := []string{"order.created", "order.shipped", "order.delivered", "order.cancelled", "client.created",
		"client.updated", "vendor.created", "vendor.updated", "vendor.claimed", "payment.recorded",
		"payment.refunded", "shipment.tracking_added", "webhook.endpoint_disabled", "webhook.test"}
	if !slices.Equal(types, want) || !slices.Equal(events.Types(), want) {
		t.Fatalf("served %v, want %v", types, want)
	}
	if _, err := eventstest.New(schemas); err != nil {
		t.Fatalf("served schemas do not compile: %v", err)
	}
}

// The Read API document's Event is one schema per kind of data, discriminated by type: its mapping
// names every type the feed holds (the catalog without webhook.test) and no other, so a new event type
// cannot reach the feed undocumented.
func TestFeedEventSchemaMapsEveryFeedType(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Discriminator struct {
					Mapping map[string]string `json:"mapping"`
				} `json:"discriminator"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.ReadJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	var mapped []string
	for typ := range doc.Components.Schemas["Event"].Discriminator.Mapping {
		mapped = append(mapped, typ)
	}
	want := slices.DeleteFunc(events.Types(), func(typ string) bool { return typ == events.WebhookTest })
	slices.Sort(mapped)
	slices.Sort(want)
	if !slices.Equal(mapped, want) {
		t.Fatalf("Event's mapping names %v, want the feed's types %v", mapped, want)
	}
}
