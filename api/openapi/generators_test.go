package openapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"wds/internal/events"
)

// The rules a client generator or a strict validator needs from every schema of every served
// document; each broke a generated client or Ajv once (docs/read-api.md, "Typed clients").
func TestEverySchemaKeepsTheGeneratorsRules(t *testing.T) {
	for name, doc := range served {
		var d any
		if err := json.Unmarshal(doc(), &d); err != nil {
			t.Fatal(err)
		}
		for _, problem := range generatorProblems(d) {
			t.Errorf("%s: %s", name, problem)
		}
	}
}

// The rules find what they are written against, so a document passing them is not passing by
// walking past its schemas.
func TestTheGeneratorsRulesFindEachMistake(t *testing.T) {
	for doc, want := range map[string]string{
		`{"a": {"nullable": true, "allOf": [{"$ref": "#/x"}]}}`:                                                                                                            "nullable without a type",
		`{"a": {"type": "string", "nullable": true, "enum": ["x"]}}`:                                                                                                       "enum without null",
		`{"a": {"type": "object", "description": "anything"}}`:                                                                                                             "object without properties",
		`{"a": {"type": "object", "properties": {"n": {"type": "integer", "default": 0}}}}`:                                                                                "default",
		`{"a": {"required": ["q"], "allOf": [{"$ref": "#/x"}]}}`:                                                                                                           "required q",
		`{"a": {"type": "object", "properties": {"event_type": {"type": "string"}}}}`:                                                                                      "event_type is not an EventType",
		`{"a": {"type": "object", "properties": {"type": {"enum": ["order.creatd"]}}}}`:                                                                                    "type is not an EventType",
		`{"paths": {"/x": {"get": {"parameters": [{"name": "type", "in": "query", "schema": {"type": "string"}}]}}}}`:                                                      "type is not an EventType",
		`{"paths": {"/x": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {"type": "object", "properties": {"rows": {"type": "array"}}}}}}}}}}}`: "list without a name",
	} {
		var d any
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(generatorProblems(d), "; ")
		if !strings.Contains(got, want) {
			t.Errorf("%s: found %q, want %q", doc, got, want)
		}
	}
	var parameterDefault any
	_ = json.Unmarshal([]byte(`{"parameters": {"limit": {"name": "limit", "in": "query", "schema": {"type": "integer", "default": 50}}}}`), &parameterDefault)
	if got := generatorProblems(parameterDefault); len(got) > 0 {
		t.Errorf("a parameter's default is allowed (generators keep parameters optional): %v", got)
	}
}

// eventTypeNames are the properties and parameters that hold event types.
var eventTypeNames = []string{"type", "types", "event_type", "event_types", "p_event_types"}

// generatorProblems lists where the document d breaks a rule:
//   - nullable stands beside a type (OpenAPI 3.0; Ajv refuses to compile it otherwise), and a nullable
//     enum lists null (or strict validators refuse the null the API sends);
//   - an object says what it holds: properties, additionalProperties or a composition (otherwise it
//     generates as Record<string, never>, which no answer fits);
//   - no schema but a parameter's has a default (generators make such a field required, so a body
//     that leaves it out, as the server allows, would not compile);
//   - every required name is among the same schema's properties (a required beside an allOf made
//     PaymentCreate a type no value has);
//   - every event type is an EventType, or an enum of the catalog's types;
//   - a 2xx answer that is a list (an object with an array property) has a name.
func generatorProblems(d any) []string {
	var out []string
	var visit func(n any, at string, inParameter bool)
	visit = func(n any, at string, inParameter bool) {
		switch v := n.(type) {
		case []any:
			for i, e := range v {
				visit(e, fmt.Sprintf("%s/%d", at, i), inParameter)
			}
		case map[string]any:
			inParameter = inParameter || v["in"] != nil
			out = append(out, schemaProblems(v, at, inParameter)...)
			if name, ok := v["name"].(string); ok && v["in"] == "query" && slices.Contains(eventTypeNames, name) && !isEventType(v["schema"]) {
				out = append(out, at+": parameter "+name+" is not an EventType")
			}
			for k, e := range v {
				switch k {
				case "example", "examples":
					continue // values, not schemas
				case "responses":
					out = append(out, unnamedLists(e, at+"/responses")...)
				}
				visit(e, at+"/"+k, inParameter)
			}
		}
	}
	visit(d, "", false)
	return out
}

func schemaProblems(s map[string]any, at string, inParameter bool) []string {
	var out []string
	if s["nullable"] == true && s["type"] == nil {
		out = append(out, at+": nullable without a type")
	}
	if enum, ok := s["enum"].([]any); ok && s["nullable"] == true && !slices.Contains(enum, nil) {
		out = append(out, at+": nullable enum without null")
	}
	_, hasProps := s["properties"]
	if s["type"] == "object" && !hasProps && s["additionalProperties"] == nil && s["allOf"] == nil && s["oneOf"] == nil && s["anyOf"] == nil {
		out = append(out, at+": object without properties or additionalProperties")
	}
	if _, ok := s["default"]; ok && !inParameter {
		out = append(out, at+": default outside a parameter (say it in the description)")
	}
	props, _ := s["properties"].(map[string]any)
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if _, ok := props[fmt.Sprint(r)]; !ok {
				out = append(out, fmt.Sprintf("%s: required %v is not among its properties", at, r))
			}
		}
	}
	for _, name := range eventTypeNames {
		if p, ok := props[name]; ok && !isEventType(p) {
			out = append(out, at+": property "+name+" is not an EventType")
		}
	}
	return out
}

// isEventType reports whether the schema s (or its items) is EventType or an enum of catalog types.
func isEventType(s any) bool {
	m, _ := s.(map[string]any)
	if items, ok := m["items"]; ok {
		return isEventType(items)
	}
	if m["$ref"] == "#/components/schemas/EventType" {
		return true
	}
	enum, ok := m["enum"].([]any)
	if !ok || len(enum) == 0 {
		return false
	}
	for _, v := range enum {
		if s, ok := v.(string); !ok || !slices.Contains(events.Types(), s) {
			return false
		}
	}
	return true
}

// unnamedLists lists the 2xx JSON answers among responses that are inline objects holding an array.
func unnamedLists(responses any, at string) []string {
	var out []string
	rs, _ := responses.(map[string]any)
	for status, r := range rs {
		if !strings.HasPrefix(status, "2") {
			continue
		}
		content, _ := r.(map[string]any)["content"].(map[string]any)
		media, _ := content["application/json"].(map[string]any)
		schema, _ := media["schema"].(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			if p, _ := p.(map[string]any); p["type"] == "array" {
				out = append(out, fmt.Sprintf("%s/%s: a list without a name (its %s)", at, status, name))
			}
		}
	}
	return out
}
