package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

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
