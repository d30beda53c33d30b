package endpoints_test

import (
	"errors"
	"strings"
	"testing"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/platform/problem"
	"wds/models"
)

// An endpoint's description is one trimmed line of at most 200 characters, optional; an edit sets
// or clears it; a refused one changes nothing.
func TestAnEndpointsDescriptionIsOneShortLine(t *testing.T) {
	f := newFixture(t)
	create := func(d string) (*endpoints.Created, error) {
		return f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: "https://127.0.0.1/d",
			EventTypes: []string{events.OrderCreated}, Description: d})
	}
	ep, err := create("  Acme's order sync  ")
	if err != nil || ep.Description == nil || *ep.Description != "Acme's order sync" {
		t.Fatalf("create %+v %v", ep, err)
	}
	for _, bad := range []string{strings.Repeat("é", 201), "two\nlines", "escape \x1b[31m"} {
		if _, err := create(bad); !errors.Is(err, problem.Invalid) {
			t.Errorf("%q: %v, want validation_failed", bad, err)
		}
	}
	if _, err := create(strings.Repeat("é", 200)); err != nil {
		t.Fatalf("200 characters: %v", err)
	}
	up, err := f.Svc.Update(f.Ctx, endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner, Description: models.Optional[string]{Set: true, Value: "Billing"}})
	if err != nil || *up.Description != "Billing" {
		t.Fatalf("update %+v %v", up, err)
	}
	if _, err := f.Svc.Update(f.Ctx, endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner, Description: models.Optional[string]{Set: true, Value: strings.Repeat("x", 201)}}); err == nil {
		t.Fatal("a long description was stored")
	}
	up, err = f.Svc.Update(f.Ctx, endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner, Description: models.Optional[string]{Set: true, Null: true}})
	if err != nil || up.Description != nil {
		t.Fatalf("clear %+v %v", up, err)
	}
}
