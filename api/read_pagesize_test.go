package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"wds/internal/apikeys"
	"wds/internal/platform/paging"
)

// A page of orders ends before the order that would take its JSON past 4 MB, with the cursor of its
// last order, so fat orders never make a page enormous; following the cursor reads the rest.
func TestAPageOfOrdersIsBoundedBySize(t *testing.T) {
	e := newFeedEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	fat := strings.Repeat("m", 900_000)
	for i := range 6 {
		body := fmt.Sprintf(`{"external_id":"fat-%d","lines":[{"quantity":1,"unit_price_cents":1}],"metadata":{"notes":%q}}`, i, fat)
		e.post("/integrations/v1/orders", k, body).want(t, http.StatusCreated, "")
	}
	checkPagesBoundedBySize(t, e, "/v1/orders", 4, 6)
}

// A client written through the Integration API may hold long text (its name and tags have no length
// limit there), so a page of clients is bounded by size as a page of orders is.
func TestAPageOfClientsIsBoundedBySize(t *testing.T) {
	e := newFeedEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	fat := strings.Repeat("c", 900_000)
	for i := range 6 {
		body := fmt.Sprintf(`{"external_id":"fat-%d","display_name":%q}`, i, fat)
		e.post("/integrations/v1/clients", k, body).want(t, http.StatusCreated, "")
	}
	checkPagesBoundedBySize(t, e, "/v1/clients", 4, 6)
}

// checkPagesBoundedBySize follows path's pages at limit=100: each is under paging.MaxPageBytes, the
// first holds first rows and a cursor, and together they hold all rows.
func checkPagesBoundedBySize(t *testing.T, e *feedEnv, path string, first, all int) {
	t.Helper()
	seen := 0
	query := "limit=100"
	for pages := 0; ; pages++ {
		r := e.get(path+"?"+query, e.read)
		if r.status != http.StatusOK {
			t.Fatalf("%d %.200s", r.status, r.body)
		}
		if len(r.body) > paging.MaxPageBytes {
			t.Fatalf("a page of %d bytes, over %d", len(r.body), paging.MaxPageBytes)
		}
		var p struct {
			Rows       []json.RawMessage        `json:"rows"`
			NextCursor *struct{ At, ID string } `json:"next_cursor"`
		}
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
		if pages == 0 && (len(p.Rows) != first || p.NextCursor == nil) {
			t.Fatalf("first page of %s: %d rows, next %v; want the %d that fit in 4 MB and a cursor", path, len(p.Rows), p.NextCursor, first)
		}
		seen += len(p.Rows)
		if p.NextCursor == nil {
			break
		}
		query = "limit=100&cursor_at=" + url.QueryEscape(p.NextCursor.At) + "&cursor_id=" + p.NextCursor.ID
	}
	if seen != all {
		t.Fatalf("the pages of %s held %d rows, want all %d", path, seen, all)
	}
}

// Orders stored before the 500-line limit (written when lines were unbounded) still read, whole on
// their own path and a page at a time in the list: two orders of 30,000 lines each take about 2.7 MB
// of JSON, so each has a page of its own.
func TestOrdersStoredBeyondTheLineLimitStillRead(t *testing.T) {
	e := newFeedEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	var ids []string
	for i := range 2 {
		body := fmt.Sprintf(`{"external_id":"old-%d","lines":[{"quantity":1,"unit_price_cents":1}]}`, i)
		ids = append(ids, e.post("/integrations/v1/orders", k, body).want(t, http.StatusCreated, "")["id"].(string))
	}
	if err := e.db.Exec(`INSERT INTO order_lines (order_id, position, description, quantity, unit_price_cents)
		SELECT o, p, 'Mug', 1, 1 FROM unnest(CAST(? AS uuid[])) o, generate_series(1, 29999) p`,
		"{"+strings.Join(ids, ",")+"}").Error; err != nil {
		t.Fatal(err)
	}
	checkPagesBoundedBySize(t, e, "/v1/orders", 1, 2)
	o := e.get("/v1/orders/"+ids[0], e.read).want(t, http.StatusOK, "")
	if n := len(o["lines"].([]any)); n != 30_000 {
		t.Fatalf("the order reads %d lines, want all 30000", n)
	}
}
