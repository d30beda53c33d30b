// Package openapi holds the machine-readable API descriptions (OpenAPI 3.0.3), written as YAML and
// served as JSON too, so one document is the source for both forms.
package openapi

import (
	"embed"
	"fmt"
	"sync"

	"sigs.k8s.io/yaml"
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
		var err error
		if d.yaml, err = docs.ReadFile(d.name); err != nil {
			panic(fmt.Sprintf("openapi: %s is not embedded: %v", d.name, err))
		}
		// The documents are part of the binary and tested; a broken one is a build defect, not input.
		if d.json, err = yaml.YAMLToJSON(d.yaml); err != nil {
			panic(fmt.Sprintf("openapi: %s does not convert to JSON: %v", d.name, err))
		}
	})
}

var read = &doc{name: "read.yaml"}

// ReadYAML is the Read API description as written.
func ReadYAML() []byte { read.load(); return read.yaml }

// ReadJSON is the Read API description as JSON.
func ReadJSON() []byte { read.load(); return read.json }
