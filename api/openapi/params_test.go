package openapi_test

import (
	"slices"
	"testing"

	"wds/api/openapi"
)

func TestQueryParamsResolveReferencesAndPathItemParameters(t *testing.T) {
	doc := []byte(`{
	  "paths": {
	    "/orgs/{org_id}/events": {
	      "summary": "events",
	      "parameters": [{"$ref": "#/components/parameters/org_id"}, {"name": "trace", "in": "query"}],
	      "get": {"parameters": [{"$ref": "#/components/parameters/limit"}, {"name": "type", "in": "query"}, {"name": "X-Id", "in": "header"}]},
	      "post": {}
	    }
	  },
	  "components": {"parameters": {
	    "org_id": {"name": "org_id", "in": "path"},
	    "limit": {"name": "limit", "in": "query"}
	  }}
	}`)
	got, err := openapi.QueryParams(doc)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"limit", "trace", "type"}; !slices.Equal(got["GET /orgs/{org_id}/events"], want) {
		t.Errorf("GET: %v, want %v", got["GET /orgs/{org_id}/events"], want)
	}
	if want := []string{"trace"}; !slices.Equal(got["POST /orgs/{org_id}/events"], want) {
		t.Errorf("POST: %v, want %v", got["POST /orgs/{org_id}/events"], want)
	}
	if len(got) != 2 {
		t.Errorf("%d operations, want 2 (summary is not one): %v", len(got), got)
	}
}

func TestTheOperatorDocumentsEventListTakesItsFilters(t *testing.T) {
	got, err := openapi.QueryParams(openapi.OperatorJSON())
	if err != nil {
		t.Fatal(err)
	}
	events := got["GET /admin/v1/orgs/{org_id}/events"]
	for _, name := range []string{"limit", "cursor_at", "cursor_id", "order_id", "order_number", "outcome", "since"} {
		if !slices.Contains(events, name) {
			t.Errorf("the event list's parameters %v lack %s", events, name)
		}
	}
}
