package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"wds/api"
	"wds/internal/apikeys"
	"wds/internal/feed"
	"wds/models"
)

// feedPage is GET /v1/events's answer.
type feedPage struct {
	Rows []json.RawMessage `json:"rows"`
	Next string            `json:"next"`
	Done bool              `json:"done"`
}

// feedRow is what a test reads of a row.
type feedRow struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// feedEnv is the Integration API's env with a read key of its org, to write real events and read
// them back through the feed.
type feedEnv struct {
	*intEnv
	read intKey
}

func newFeedEnv(t *testing.T) *feedEnv {
	e := newIntEnv(t)
	key := mustReadKey(t, e.db, e.org.ID, e.owner.ID, models.ScopeReadOnly, nil)
	return &feedEnv{intEnv: e, read: intKey{token: key}}
}

// order creates a paid order: client.created, order.created and payment.recorded.
func (e *feedEnv) order(k intKey, ext string) {
	e.t.Helper()
	body := strings.Replace(orderBody(ext, 0, 0, ptr[int64](1000), [2]int64{1, 1000}), `{`,
		fmt.Sprintf(`{"client":{"external_id":"c-%s","email":"%s@example.com"},`, ext, ext), 1)
	e.post("/integrations/v1/orders", k, body).want(e.t, http.StatusCreated, "")
}

func (e *feedEnv) page(query string) feedPage {
	e.t.Helper()
	r := e.get("/v1/events?"+query, e.read)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET /v1/events?%s: %d %s", query, r.status, r.body)
	}
	var p feedPage
	if err := json.Unmarshal(r.body, &p); err != nil {
		e.t.Fatalf("not a feed page: %v %s", err, r.body)
	}
	return p
}

// follow pages through the feed with next from query until a page is done.
func (e *feedEnv) follow(query string) ([]feedRow, string) {
	e.t.Helper()
	var rows []feedRow
	for {
		p := e.page(query)
		for _, raw := range p.Rows {
			var r feedRow
			if err := json.Unmarshal(raw, &r); err != nil {
				e.t.Fatal(err)
			}
			rows = append(rows, r)
		}
		base, _ := url.ParseQuery(query)
		base.Set("after", p.Next)
		query = base.Encode()
		if p.Done {
			return rows, p.Next
		}
	}
}

func TestEventFeedPagesEveryEventOnceInOrder(t *testing.T) {
	e := newFeedEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	for i := range 3 {
		e.order(k, fmt.Sprintf("o-%d", i))
	}
	rows, next := e.follow("limit=2")
	var stored []string
	if err := e.db.Raw(`SELECT id::text FROM events WHERE type <> 'webhook.test' ORDER BY created_at, id`).Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.ID)
	}
	if len(stored) != 9 || strings.Join(got, ",") != strings.Join(stored, ",") {
		t.Fatalf("feed ids %v, want the 9 events in the order they were written %v", got, stored)
	}
	// The checkpoint sees only what comes after it.
	e.order(k, "late")
	later, _ := e.follow("after=" + url.QueryEscape(next))
	if len(later) != 3 || later[0].Type != "client.created" {
		t.Fatalf("after the checkpoint: %+v, want the late order's three events", later)
	}
	payments, _ := e.follow("types=payment.recorded&limit=100")
	if len(payments) != 4 {
		t.Fatalf("types=payment.recorded: %d rows, want 4", len(payments))
	}
	if store, _ := e.follow("store_id=" + e.store.ID.String()); len(store) != 12 {
		t.Fatalf("store_id: %d rows, want 12", len(store))
	}
	// One event, as its deliveries carry it.
	r := e.get("/v1/events/"+stored[0], e.read)
	var body string
	if err := e.db.Raw(`SELECT body::text FROM events WHERE id = ?`, stored[0]).Scan(&body).Error; err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusOK || string(r.body) != body {
		t.Fatalf("GET /v1/events/{id}: %d %s, want the stored body", r.status, r.body)
	}
}

func TestEventFeedRefusesWhatItCannotServe(t *testing.T) {
	e := newFeedEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	e.order(k, "o-1")
	var id string
	if err := e.db.Raw(`SELECT id::text FROM events LIMIT 1`).Scan(&id).Error; err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query  string
		status int
		code   string
	}{
		{"types=order.creatd", 400, "invalid_parameter"},
		{"types=order.created,", 400, "invalid_parameter"},
		{"after=not-an-iterator", 400, "invalid_cursor"},
		{"after=", 400, "invalid_cursor"},
		{"since=yesterday", 400, "invalid_parameter"},
		{"limit=0", 400, "invalid_parameter"},
		{"store_id=x", 400, "invalid_parameter"},
	} {
		r := e.get("/v1/events?"+c.query, e.read)
		wantError(t, r.status, r.body, c.status, c.code)
		if c.code == "invalid_parameter" && strings.HasPrefix(c.query, "types=order.creatd") && !strings.Contains(string(r.body), "order.creatd") {
			t.Errorf("types: the detail does not name the unknown type: %s", r.body)
		}
	}
	// Another org's event is not found, nor is a path that is not an id.
	other, _, owner := mustOrg(t, e.db, "Other")
	otherKey := intKey{token: mustReadKey(t, e.db, other.ID, owner.ID, models.ScopeReadOnly, nil)}
	r := e.get("/v1/events/"+id, otherKey)
	wantError(t, r.status, r.body, 404, "not_found")
	r = e.get("/v1/events/nope", e.read)
	wantError(t, r.status, r.body, 404, "not_found")
	if rows, _ := (&feedEnv{intEnv: e.intEnv, read: otherKey}).follow(""); len(rows) != 0 {
		t.Fatalf("another org's feed holds %d of this org's events", len(rows))
	}
	if r := e.get("/v1/events", intKey{}); r.status != http.StatusUnauthorized {
		t.Fatalf("no key: %d", r.status)
	}
}

// An iterator older than what is kept (WDS_RETENTION) is 410 iterator_expired, whose detail says where
// to start again.
func TestEventFeedIteratorExpires(t *testing.T) {
	e := newFeedEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	e.order(k, "o-1")
	if err := e.db.Exec(`UPDATE events SET created_at = created_at - interval '2 hours'`).Error; err != nil {
		t.Fatal(err)
	}
	kept := e.instance(func(d *api.Deps) { d.Feed = feed.NewService(e.db, time.Hour) })
	p := (&feedEnv{intEnv: kept, read: e.read}).page("limit=1")
	r := kept.get("/v1/events?after="+url.QueryEscape(p.Next), e.read)
	wantError(t, r.status, r.body, 410, "iterator_expired")
	if !strings.Contains(string(r.body), "since=") {
		t.Fatalf("the detail does not say where to start again: %s", r.body)
	}
}
