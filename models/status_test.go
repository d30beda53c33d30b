package models_test

import (
	"encoding/json"
	"slices"
	"testing"

	"wds/api/openapi"
	"wds/internal/eventsearch"
	"wds/models"
)

// The Operator API's document spells the statuses and outcomes for its readers; it spells the same
// words as the Go constants, every one of them.
func TestOpenAPISpellsTheStatuses(t *testing.T) {
	var doc struct {
		Paths map[string]struct {
			Get struct {
				Parameters []struct {
					Name   string
					Schema struct{ Enum []string }
				}
			}
		}
		Components struct {
			Schemas map[string]struct {
				Enum       []any // other schemas' enums hold booleans
				Properties map[string]struct{ Enum []any }
			}
		}
	}
	if err := json.Unmarshal(openapi.OperatorJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	var filter []string
	for _, p := range doc.Paths["/admin/v1/orgs/{org_id}/deliveries"].Get.Parameters {
		if p.Name == "status" {
			filter = p.Schema.Enum
		}
	}
	schemas := doc.Components.Schemas
	for what, c := range map[string]struct{ got, want []string }{
		"the deliveries' status filter": {filter, words(models.Recorded)},
		"Delivery.status":               {texts(schemas["Delivery"].Properties["status"].Enum), words(models.Recorded)},
		"EventOutcome":                  {texts(schemas["EventOutcome"].Enum), words(eventsearch.Outcomes)},
		"Chain.outcome": {texts(schemas["Chain"].Properties["outcome"].Enum),
			words([]eventsearch.Outcome{eventsearch.OutcomeSucceeded, eventsearch.OutcomeDropped, eventsearch.OutcomeInProgress})},
	} {
		if !slices.Equal(slices.Sorted(slices.Values(c.got)), slices.Sorted(slices.Values(c.want))) {
			t.Errorf("%s: the document says %v, the code %v", what, c.got, c.want)
		}
	}
}

func words[S ~string](vs []S) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func texts(enum []any) []string {
	out := make([]string, len(enum))
	for i, v := range enum {
		out[i], _ = v.(string)
	}
	return out
}
