package openapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// operation is what these tests read of an operation: its security, parameters and answers.
type operation struct {
	Security   *[]any              `json:"security"`
	Parameters []parameterRef      `json:"parameters"`
	Responses  map[string]response `json:"responses"`
}

type response struct {
	Ref     string         `json:"$ref"`
	Headers map[string]any `json:"headers"`
}

type parameterRef struct {
	Ref string `json:"$ref"`
}

// operations are a served document's operations by "METHOD path".
func operations(t *testing.T, doc []byte) map[string]operation {
	t.Helper()
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Responses map[string]response `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string]operation{}
	for path, item := range d.Paths {
		for method, raw := range item {
			var op operation
			if method == "parameters" || json.Unmarshal(raw, &op) != nil {
				continue
			}
			for status, r := range op.Responses {
				if r.Ref != "" {
					op.Responses[status] = d.Components.Responses[strings.TrimPrefix(r.Ref, "#/components/responses/")]
				}
			}
			out[strings.ToUpper(method)+" "+path] = op
		}
	}
	return out
}

// Every Operator API operation that takes a token can answer 429 (an address past 60 refused
// credentials a minute gets it on any of them), so each documents it.
func TestEveryOperatorOperationDocumentsItsRateLimit(t *testing.T) {
	for name, op := range operations(t, OperatorJSON()) {
		open := op.Security != nil && len(*op.Security) == 0
		if _, ok := op.Responses["429"]; !ok && !open {
			t.Errorf("%s does not document its 429", name)
		}
	}
}

// notReplayed are the answers the Idempotency-Key layer does not store (settle in api/integration.go),
// so no replay carries them.
var notReplayed = []string{"400", "401", "403", "413", "429", "503"}

// Every Integration API operation that takes an Idempotency-Key declares, on each answer a replay
// can carry, the Idempotent-Replayed header the replay has.
func TestEveryReplayableAnswerDeclaresItsReplayHeader(t *testing.T) {
	idempotent := 0
	for name, op := range operations(t, IntegrationJSON()) {
		if !slices.ContainsFunc(op.Parameters, func(p parameterRef) bool { return p.Ref == "#/components/parameters/idempotencyKey" }) {
			continue
		}
		idempotent++
		for status, r := range op.Responses {
			if _, ok := r.Headers["Idempotent-Replayed"]; !ok && !slices.Contains(notReplayed, status) {
				t.Errorf("%s %s does not declare Idempotent-Replayed", name, status)
			}
		}
	}
	if idempotent == 0 {
		t.Fatal("no operation takes an Idempotency-Key")
	}
}
