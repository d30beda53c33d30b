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
	seen := 0
	query := "limit=100"
	for pages := 0; ; pages++ {
		r := e.get("/v1/orders?"+query, e.read)
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
		if pages == 0 && (len(p.Rows) != 4 || p.NextCursor == nil) {
			t.Fatalf("first page: %d orders, next %v; want the 4 that fit in 4 MB and a cursor", len(p.Rows), p.NextCursor)
		}
		seen += len(p.Rows)
		if p.NextCursor == nil {
			break
		}
		query = "limit=100&cursor_at=" + url.QueryEscape(p.NextCursor.At) + "&cursor_id=" + p.NextCursor.ID
	}
	if seen != 6 {
		t.Fatalf("the pages held %d orders, want all 6", seen)
	}
}
