package openapi

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	yaml3 "go.yaml.in/yaml/v3"

	"wds/internal/events"
)

var served = map[string]func() []byte{"read": ReadJSON, "integration": IntegrationJSON, "operator": OperatorJSON}

// Each served document stands alone: every reference resolves inside it and it is valid OpenAPI.
func TestEveryServedDocumentIsWholeAndValid(t *testing.T) {
	for name, doc := range served {
		d, err := openapi3.NewLoader().LoadFromData(doc())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := d.Validate(context.Background()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Every shape in shared.yaml is used by a document, so the file holds no forgotten copy, and the
// documents reference Order, Payment, Client and Error from it rather than holding their own.
func TestSharedShapesAreUsedAndNotRedefined(t *testing.T) {
	var sh struct {
		Components struct {
			Schemas map[string]any `yaml:"schemas"`
		} `yaml:"components"`
	}
	src, _ := docs.ReadFile("shared.yaml")
	if err := yaml3.Unmarshal(src, &sh); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for name := range served {
		own, _ := docs.ReadFile(name + ".yaml")
		var d struct {
			Components struct {
				Schemas map[string]any `yaml:"schemas"`
			} `yaml:"components"`
		}
		if err := yaml3.Unmarshal(own, &d); err != nil {
			t.Fatal(err)
		}
		for s := range sh.Components.Schemas {
			if _, ok := d.Components.Schemas[s]; ok {
				t.Errorf("%s.yaml defines %s, which shared.yaml holds", name, s)
			}
		}
		var bundled struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(served[name](), &bundled); err != nil {
			t.Fatal(err)
		}
		for s := range bundled.Components.Schemas {
			used[s], used[strings.TrimPrefix(s, "Nullable")] = true, true
		}
	}
	for s := range sh.Components.Schemas {
		if !used[s] {
			t.Errorf("shared.yaml's %s is used by no document", s)
		}
	}
}

// EventType is the catalog, and NullableX is X with null allowed, in its enum too.
func TestGeneratedSchemas(t *testing.T) {
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Enum     []any `json:"enum"`
				Nullable bool  `json:"nullable"`
				Type     string
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(OperatorJSON(), &d); err != nil {
		t.Fatal(err)
	}
	var enum []string
	for _, v := range d.Components.Schemas["EventType"].Enum {
		enum = append(enum, v.(string))
	}
	if !slices.Equal(enum, events.Types()) {
		t.Errorf("EventType is %v, want the catalog %v", enum, events.Types())
	}
	addr := d.Components.Schemas["NullableAddressInput"]
	if !addr.Nullable || addr.Type != "object" {
		t.Errorf("NullableAddressInput is %+v, want AddressInput with nullable", addr)
	}
	src := []byte("components:\n  schemas:\n    A: {$ref: \"#/components/schemas/NullableKind\"}\n    Kind: {type: string, enum: [a, b]}\n")
	out, err := bundle(src, shared())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Components struct {
			Schemas map[string]struct {
				Enum     []any `yaml:"enum"`
				Nullable bool  `yaml:"nullable"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml3.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if k := got.Components.Schemas["NullableKind"]; !k.Nullable || !slices.Equal(k.Enum, []any{"a", "b", nil}) {
		t.Errorf("NullableKind is %+v, want Kind with null in its enum:\n%s", k, out)
	}
	if _, err := bundle([]byte("x: {$ref: \"#/components/schemas/Nowhere\"}\n"), shared()); err == nil {
		t.Error("a reference to nothing bundled")
	}
}

// Every 2xx JSON answer of every document carries an example, on the answer or on the schema it names;
// Spectral's spectral:oas (test/e2e/typedclient_test.go) checks each example against its schema.
func TestEverySuccessfulAnswerHasAnExample(t *testing.T) {
	type media struct {
		Example any `json:"example"`
		Schema  struct {
			Ref     string `json:"$ref"`
			Example any    `json:"example"`
		} `json:"schema"`
	}
	type response struct {
		Ref     string           `json:"$ref"`
		Content map[string]media `json:"content"`
	}
	for name, doc := range served {
		var d struct {
			Paths      map[string]map[string]json.RawMessage `json:"paths"`
			Components struct {
				Responses map[string]response `json:"responses"`
				Schemas   map[string]struct {
					Example any `json:"example"`
				} `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(doc(), &d); err != nil {
			t.Fatal(err)
		}
		for path, item := range d.Paths {
			for method, raw := range item {
				var op struct {
					Responses map[string]response `json:"responses"`
				}
				if method == "parameters" || json.Unmarshal(raw, &op) != nil {
					continue
				}
				for status, r := range op.Responses {
					if !strings.HasPrefix(status, "2") {
						continue
					}
					if r.Ref != "" {
						r = d.Components.Responses[strings.TrimPrefix(r.Ref, "#/components/responses/")]
					}
					m, ok := r.Content["application/json"]
					if !ok {
						continue
					}
					named := d.Components.Schemas[strings.TrimPrefix(m.Schema.Ref, "#/components/schemas/")].Example
					if m.Example == nil && m.Schema.Example == nil && named == nil {
						t.Errorf("%s: %s %s %s has no example", name, method, path, status)
					}
				}
			}
		}
	}
}
