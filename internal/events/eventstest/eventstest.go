// Package eventstest validates delivered webhook bodies against the catalog's JSON Schemas with a
// JSON Schema library, for tests: every test that sees a body checks it against the same documents
// GET /v1/event-types serves.
package eventstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gorm.io/gorm"

	"wds/internal/events"
)

// Validator holds one compiled schema per event type.
type Validator struct {
	schemas map[string]*jsonschema.Schema
}

// New compiles the schemas, keyed by event type, asserting formats (uuid, date-time) too.
func New(schemas map[string]json.RawMessage) (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	v := &Validator{schemas: map[string]*jsonschema.Schema{}}
	for typ, raw := range schemas {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("schema of %s: %w", typ, err)
		}
		url := "urn:wds:event:" + typ
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("schema of %s: %w", typ, err)
		}
		if v.schemas[typ], err = c.Compile(url); err != nil {
			return nil, fmt.Errorf("compile schema of %s: %w", typ, err)
		}
	}
	return v, nil
}

// Validate checks a delivered body against the schema of the type it names.
func (v *Validator) Validate(body []byte) error {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	s := v.schemas[head.Type]
	if s == nil {
		return fmt.Errorf("no schema for event type %q", head.Type)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("%s body does not match its schema: %w", head.Type, err)
	}
	return nil
}

// Catalog is the Validator of the catalog's own schemas (events.Catalog), built once.
var Catalog = sync.OnceValues(func() (*Validator, error) {
	schemas := map[string]json.RawMessage{}
	for _, k := range events.Catalog() {
		schemas[k.Type] = k.Schema()
	}
	return New(schemas)
})

// Written lists the types of every event in db's outbox, oldest first, and fails t unless each body
// validates against the catalog's schema of its type: what a test that performs writes checks.
func Written(t testing.TB, db *gorm.DB) []string {
	t.Helper()
	var rows []struct{ Type, Body string }
	if err := db.Raw(`SELECT type, body::text AS body FROM events ORDER BY created_at, id`).Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	v, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	types := make([]string, len(rows))
	for i, r := range rows {
		types[i] = r.Type
		if err := v.Validate([]byte(r.Body)); err != nil {
			t.Errorf("%v\n%s", err, r.Body)
		}
	}
	return types
}
