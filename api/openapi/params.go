package openapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// QueryParams are the query parameters each operation of a document (as JSON) takes, by
// "METHOD /path" with the document's {name} path templates: its path item's and its own, references
// to components/parameters resolved, sorted.
func QueryParams(doc []byte) (map[string][]string, error) {
	type param struct {
		Ref  string `json:"$ref"`
		Name string `json:"name"`
		In   string `json:"in"`
	}
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]param `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("openapi: read the document: %w", err)
	}
	query := func(raw json.RawMessage) ([]string, error) {
		var op struct{ Parameters []param }
		if err := json.Unmarshal(raw, &op); err != nil {
			return nil, fmt.Errorf("openapi: read parameters: %w", err)
		}
		var names []string
		for _, p := range op.Parameters {
			if p.Ref != "" {
				p = d.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
			}
			if p.In == "query" {
				names = append(names, p.Name)
			}
		}
		return names, nil
	}
	out := map[string][]string{}
	for path, item := range d.Paths {
		shared, err := query(json.RawMessage(`{"parameters":` + string(orNull(item["parameters"])) + `}`))
		if err != nil {
			return nil, err
		}
		for method, raw := range item {
			if !slices.Contains(methods, method) {
				continue // parameters, summary, description
			}
			own, err := query(raw)
			if err != nil {
				return nil, err
			}
			names := append(slices.Clone(shared), own...)
			slices.Sort(names)
			out[strings.ToUpper(method)+" "+path] = slices.Compact(names)
		}
	}
	return out, nil
}

// methods are the keys of a path item that are operations.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func orNull(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}
