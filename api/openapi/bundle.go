package openapi

import (
	"bytes"
	"fmt"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
)

// componentKinds are the sections of components a shared definition may sit in.
var componentKinds = []string{"schemas", "parameters", "headers", "responses"}

// bundle returns the document src with every shared component it references, directly or through
// another shared one, copied into its own components, so each served document stands alone while
// its shapes are written once. A document's own definition wins over a shared one of the same name
// (each API's ErrorCode is its own). A reference that neither holds is an error.
func bundle(src []byte, shared *yaml3.Node) ([]byte, error) {
	var doc yaml3.Node
	if err := yaml3.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	root := doc.Content[0]
	components := mappingAt(root, "components")
	copied := map[string]bool{}
	pending := refs(root)
	for len(pending) > 0 {
		ref := pending[0]
		pending = pending[1:]
		kind, name, ok := componentRef(ref)
		if !ok {
			return nil, fmt.Errorf("%s is not a reference to a component", ref)
		}
		own := mappingAt(components, kind)
		if value(own, name) != nil || copied[ref] {
			continue
		}
		def := value(value(value(shared, "components"), kind), name)
		if def == nil {
			nullable, err := nullableOf(components, shared, kind, name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ref, err)
			}
			own.Content = append(own.Content, scalar(name), nullable)
			pending = append(pending, refs(nullable)...)
			continue
		}
		copied[ref] = true
		pending = append(pending, refs(def)...)
	}
	appendShared(components, shared, copied)
	var out bytes.Buffer
	enc := yaml3.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return out.Bytes(), nil
}

// nullableOf builds NullableX: a copy of the schema X, from the document or shared.yaml, that also
// allows null. OpenAPI 3.0's nullable applies only beside a type in the same schema, so a nullable
// reference to X cannot be written as X plus nullable; a copy can.
func nullableOf(components, shared *yaml3.Node, kind, name string) (*yaml3.Node, error) {
	base, ok := strings.CutPrefix(name, "Nullable")
	if kind != "schemas" || !ok {
		return nil, fmt.Errorf("defined neither in the document nor in shared.yaml")
	}
	def := value(value(components, kind), base)
	if def == nil {
		def = value(value(value(shared, "components"), kind), base)
	}
	if def == nil || value(def, "type") == nil {
		return nil, fmt.Errorf("%s needs a schema %s with a type to copy", name, base)
	}
	out := &yaml3.Node{Kind: yaml3.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(def.Content); i += 2 {
		if key := def.Content[i].Value; key != "nullable" {
			out.Content = append(out.Content, def.Content[i], def.Content[i+1])
		}
	}
	out.Content = append(out.Content, scalar("nullable"), &yaml3.Node{Kind: yaml3.ScalarNode, Tag: "!!bool", Value: "true"})
	if enum := value(def, "enum"); enum != nil {
		withNull := *enum
		withNull.Content = append(append([]*yaml3.Node{}, enum.Content...), &yaml3.Node{Kind: yaml3.ScalarNode, Tag: "!!null", Value: "null"})
		setValue(out, "enum", &withNull)
	}
	return out, nil
}

// setValue replaces the value of key in the mapping n.
func setValue(n *yaml3.Node, key string, v *yaml3.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = v
		}
	}
}

// appendShared adds the copied shared definitions to components in shared.yaml's order, so the
// served document reads the same on every build.
func appendShared(components, shared *yaml3.Node, copied map[string]bool) {
	for _, kind := range componentKinds {
		defs := value(value(shared, "components"), kind)
		if defs == nil {
			continue
		}
		for i := 0; i+1 < len(defs.Content); i += 2 {
			name := defs.Content[i].Value
			if copied["#/components/"+kind+"/"+name] {
				own := mappingAt(components, kind)
				own.Content = append(own.Content, defs.Content[i], defs.Content[i+1])
			}
		}
	}
}

// componentRef splits "#/components/schemas/Order" into its kind and name.
func componentRef(ref string) (kind, name string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
	if len(parts) != 2 || !strings.HasPrefix(ref, "#/components/") {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// refs lists every $ref under n, in document order.
func refs(n *yaml3.Node) []string {
	var out []string
	if n.Kind == yaml3.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "$ref" {
				out = append(out, n.Content[i+1].Value)
			}
		}
	}
	for _, c := range n.Content {
		out = append(out, refs(c)...)
	}
	return out
}

// value is the value of key in the mapping n, or nil.
func value(n *yaml3.Node, key string) *yaml3.Node {
	if n == nil || n.Kind != yaml3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// mappingAt is the mapping under key in n, added empty when n has none.
func mappingAt(n *yaml3.Node, key string) *yaml3.Node {
	if v := value(n, key); v != nil {
		return v
	}
	k := &yaml3.Node{Kind: yaml3.ScalarNode, Tag: "!!str", Value: key}
	v := &yaml3.Node{Kind: yaml3.MappingNode, Tag: "!!map"}
	n.Content = append(n.Content, k, v)
	return v
}
