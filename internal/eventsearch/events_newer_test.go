package eventsearch_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/eventsearch"
	"wds/internal/platform/paging"
)

// The event search pages both ways: walking older pages to the end and then Newer pages back from
// the last gives every page again, newest first within each, and the first page, which has no
// newer one, ends the walk back.
func TestEventSearchPagesNewerAsWellAsOlder(t *testing.T) {
	f := newFixture(t)
	for i := range 8 {
		f.Event(events.VendorCreated, map[string]any{"id": uuid.New(), "n": i})
	}
	ids := func(p *eventsearch.EventsPage) string {
		var out []uuid.UUID
		for _, r := range p.Rows {
			out = append(out, r.ID)
		}
		return fmt.Sprint(out)
	}
	q := eventsearch.EventsQuery{OrgID: f.Org, Limit: 3}
	var pages []*eventsearch.EventsPage
	for {
		p, err := f.Events.ListEvents(f.Ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
		if p.NextCursor == nil {
			break
		}
		q.Cursor = p.NextCursor
	}
	if len(pages) != 3 {
		t.Fatalf("8 events in pages of 3: %d pages", len(pages))
	}
	p := pages[len(pages)-1]
	for i := len(pages) - 2; i >= 0; i-- {
		top := p.Rows[0]
		var err error
		p, err = f.Events.ListEvents(f.Ctx, eventsearch.EventsQuery{OrgID: f.Org, Limit: 3, Newer: true,
			Cursor: &paging.Cursor{At: top.CreatedAt, ID: top.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if ids(p) != ids(pages[i]) {
			t.Fatalf("newer than page %d: %s, want %s", i+2, ids(p), ids(pages[i]))
		}
		if (i == 0) != (p.NewerCursor == nil) || p.NextCursor == nil {
			t.Fatalf("page %d walked back to: newer %v, older %v", i+1, p.NewerCursor, p.NextCursor)
		}
	}
}
