// Package openapi holds the machine-readable API descriptions (OpenAPI 3.0.3), written as YAML and
// served as JSON too, so one document is the source for both forms. The shapes the APIs share (the
// order, payment, client, event bodies, the error, the cursor) are written once, in shared.yaml, and
// copied into each served document that references them; the EventType enum is generated from the
// event catalog. A served document therefore stands alone, and the three cannot drift apart.
package openapi

import (
	"embed"
	"fmt"
	"sync"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"wds/internal/events"
)

//go:embed *.yaml
var docs embed.FS

type doc struct {
	once       sync.Once
	name       string
	yaml, json []byte
}

func (d *doc) load() {
	d.once.Do(func() {
		src, err := docs.ReadFile(d.name)
		if err != nil {
			panic(fmt.Sprintf("openapi: %s is not embedded: %v", d.name, err))
		}
		// The documents are part of the binary and tested; a broken one is a build defect, not input.
		if d.yaml, err = bundle(src, shared()); err != nil {
			panic(fmt.Sprintf("openapi: %s does not bundle: %v", d.name, err))
		}
		if d.json, err = yaml.YAMLToJSON(d.yaml); err != nil {
			panic(fmt.Sprintf("openapi: %s does not convert to JSON: %v", d.name, err))
		}
	})
}

// shared is shared.yaml with the EventType enum of the catalog added to its schemas.
var shared = sync.OnceValue(func() *yaml3.Node {
	src, err := docs.ReadFile("shared.yaml")
	if err != nil {
		panic(fmt.Sprintf("openapi: shared.yaml is not embedded: %v", err))
	}
	var n yaml3.Node
	if err := yaml3.Unmarshal(src, &n); err != nil {
		panic(fmt.Sprintf("openapi: shared.yaml does not parse: %v", err))
	}
	root := n.Content[0]
	schemas := mappingAt(mappingAt(root, "components"), "schemas")
	schemas.Content = append(schemas.Content, scalar("EventType"), eventTypeSchema())
	return root
})

// eventTypeSchema is {type: string, description, enum: [the catalog]}.
func eventTypeSchema() *yaml3.Node {
	enum := &yaml3.Node{Kind: yaml3.SequenceNode, Tag: "!!seq"}
	for _, t := range events.Types() {
		enum.Content = append(enum.Content, scalar(t))
	}
	return &yaml3.Node{Kind: yaml3.MappingNode, Tag: "!!map", Content: []*yaml3.Node{
		scalar("type"), scalar("string"),
		scalar("description"), scalar("An event type of the catalog that GET /v1/event-types serves."),
		scalar("enum"), enum,
	}}
}

func scalar(s string) *yaml3.Node { return &yaml3.Node{Kind: yaml3.ScalarNode, Tag: "!!str", Value: s} }

var read = &doc{name: "read.yaml"}

// ReadYAML is the Read API description as served, in YAML.
func ReadYAML() []byte { read.load(); return read.yaml }

// ReadJSON is the Read API description as JSON.
func ReadJSON() []byte { read.load(); return read.json }
