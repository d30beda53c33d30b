package openapitest

import (
	"encoding/json"
	"strings"
	"testing"

	"wds/api/openapi"
)

// The strict validator runs over the served documents: it accepts an answer they describe and names
// what is wrong in one they do not, so a check that passes has been made by both validators.
func TestAjvHoldsAnswersToTheDocuments(t *testing.T) {
	strict, err := startAjv(t)
	if err != nil {
		t.Fatal(err)
	}
	good := `{"error":"not_found","detail":"order not found"}`
	if err := strict.validate("read", "/v1/orders/{id}", "GET", 404, []byte(good)); err != nil {
		t.Errorf("a documented error: %v", err)
	}
	for body, want := range map[string]string{
		`{"error":"not_a_code","detail":"x"}`:    "allowed values",
		`{"error":"not_found"}`:                  "detail",
		`{"rows":[{"id":1}],"next_cursor":null}`: "",
	} {
		path, status := "/v1/orders/{id}", 404
		if strings.HasPrefix(body, `{"rows"`) {
			path, status = "/v1/orders", 200
		}
		err := strict.validate("read", path, "GET", status, []byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", body, err, want)
		}
	}
}

// Every schema of the documents is compiled in strict mode, not only the answers' that tests receive:
// a request's shape Ajv refuses (here the nullable allOf without a type that ClientFields once had)
// fails every check, naming it.
func TestAjvRefusesADocumentWithASchemaItCannotCompile(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openapi.OperatorJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	fields := doc["components"].(map[string]any)["schemas"].(map[string]any)["ClientFields"].(map[string]any)
	fields["properties"].(map[string]any)["billing_address"] = map[string]any{
		"allOf": []any{map[string]any{"$ref": "#/components/schemas/AddressInput"}}, "nullable": true}
	broken, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := spawnAjv(t, map[string][]byte{"operator": broken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { strict.stop() })
	err = strict.validate("operator", "/admin/v1/openapi.json", "GET", 200, []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "operator ClientFields") || !strings.Contains(err.Error(), "nullable") {
		t.Errorf("a document with a schema Ajv cannot compile: %v, want the refusal naming ClientFields", err)
	}
}
