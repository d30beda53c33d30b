package events

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

// resources holds the definitions every body schema embeds: the order, payment, shipment, client and
// vendor as the Read API shows them, and the data of each event kind.
//
//go:embed schemas/resources.json
var resources []byte

// ref points at a definition of resources.json inside a body schema.
func ref(def string) map[string]string { return map[string]string{"$ref": "#/$defs/" + def} }

// bodySchema is the schema of the whole delivered body. A body over the payload cap arrives
// summarized (summarized: true, a detail, and data holding only the resource's id), so the schema
// says both shapes.
type bodySchema struct {
	Schema     string          `json:"$schema"`
	Title      string          `json:"title"`
	Type       string          `json:"type"`
	Required   []string        `json:"required"`
	Properties map[string]any  `json:"properties"`
	Additional bool            `json:"additionalProperties"`
	If         map[string]any  `json:"if"`
	Then       map[string]any  `json:"then"`
	Else       map[string]any  `json:"else"`
	Defs       json.RawMessage `json:"$defs"`
}

func (k Kind) buildSchema() (json.RawMessage, error) {
	id := any(ref("uuid"))
	if k.Type == WebhookTest {
		id = map[string]string{"type": "null"}
	}
	s := bodySchema{
		Schema:   "https://json-schema.org/draft/2020-12/schema",
		Title:    k.Type + " webhook body",
		Type:     "object",
		Required: []string{"id", "type", "created_at", "org_id", "store_id", "data"},
		Properties: map[string]any{
			"id": id, "type": map[string]string{"const": k.Type}, "created_at": ref("time"),
			"org_id": ref("uuid"), "store_id": ref("nullableUUID"), "data": true,
			"summarized": map[string]bool{"const": true}, "detail": map[string]string{"type": "string"},
		},
		If:   map[string]any{"required": []string{"summarized"}},
		Then: map[string]any{"required": []string{"detail"}, "properties": map[string]any{"data": ref("summary")}},
		Else: map[string]any{"properties": map[string]any{"data": ref(k.data)}},
		Defs: resources,
	}
	out, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", k.Type, err)
	}
	return out, nil
}

var schemas = sync.OnceValue(func() map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(kinds))
	for _, k := range kinds {
		s, err := k.buildSchema()
		if err != nil { // the definitions are embedded and tested: a failure is a build defect
			panic(err)
		}
		out[k.Type] = s
	}
	return out
})

// Schema is the JSON Schema (draft 2020-12) of the whole body delivered for the kind's events.
func (k Kind) Schema() json.RawMessage { return schemas()[k.Type] }

// catalogRow is one row of GET /v1/event-types.
type catalogRow struct {
	Type        string          `json:"type"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// Document is the body of GET /v1/event-types: {"rows": [{type, description, schema}]} in catalog
// order. It never changes while the process runs, so it is built once.
var Document = sync.OnceValue(func() []byte {
	rows := make([]catalogRow, len(kinds))
	for i, k := range kinds {
		rows[i] = catalogRow{Type: k.Type, Description: k.Description, Schema: k.Schema()}
	}
	out, err := json.Marshal(map[string][]catalogRow{"rows": rows})
	if err != nil { // built from embedded, tested definitions
		panic(fmt.Sprintf("event-type catalog: %v", err))
	}
	return out
})
