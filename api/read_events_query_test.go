package api_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/apikeys"
	"wds/internal/events"
	"wds/internal/outbox"
	"wds/internal/workspace"
)

// writeFeedEvents writes n events of typ for store in one transaction, as a business write does,
// and returns their ids.
func (e *feedEnv) writeFeedEvents(typ string, store *uuid.UUID, n int) []string {
	e.t.Helper()
	var pending []outbox.PendingEvent
	var ids []string
	for range n {
		ev, err := outbox.NewEvent(e.org.ID, store, typ, map[string]string{"id": uuid.NewString()})
		if err != nil {
			e.t.Fatal(err)
		}
		pending = append(pending, ev)
		ids = append(ids, ev.ID.String())
	}
	if _, err := outbox.WriteEvents(context.Background(), e.db, pending); err != nil {
		e.t.Fatal(err)
	}
	return ids
}

func rowIDs(rows []feedRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}

// since over HTTP starts at the events created from that time on (less the documented minute);
// after wins when both are given.
func TestEventFeedSinceOverHTTP(t *testing.T) {
	e := newFeedEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	e.order(k, "old")
	// Age the first order's events past the start's minute, as if written long ago.
	if err := e.db.Exec(`UPDATE events SET created_at = created_at - interval '1 hour'`).Error; err != nil {
		t.Fatal(err)
	}
	_, checkpoint := e.follow("")
	since := time.Now().UTC().Format(time.RFC3339Nano)
	e.order(k, "fresh")
	var fresh []string
	if err := e.db.Raw(`SELECT id::text FROM events WHERE created_at > now() - interval '1 minute' ORDER BY created_at, id`).Scan(&fresh).Error; err != nil {
		t.Fatal(err)
	}
	rows, _ := e.follow("since=" + url.QueryEscape(since))
	if len(fresh) != 3 || strings.Join(rowIDs(rows), ",") != strings.Join(fresh, ",") {
		t.Fatalf("since=%s: got %v, want the fresh order's three events %v", since, rowIDs(rows), fresh)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if rows, _ := e.follow("since=" + url.QueryEscape(future)); len(rows) != 0 {
		t.Fatalf("since an hour from now: %v, want nothing", rowIDs(rows))
	}
	// after wins: from the checkpoint taken before the fresh order, whatever since says.
	rows, _ = e.follow("since=" + url.QueryEscape(future) + "&after=" + url.QueryEscape(checkpoint))
	if strings.Join(rowIDs(rows), ",") != strings.Join(fresh, ",") {
		t.Fatalf("after and since: got %v, want after's %v", rowIDs(rows), fresh)
	}
}

// store_id keeps one store's events and types several types, over HTTP, with another store's and
// other types' events beside them.
func TestEventFeedFiltersOverHTTP(t *testing.T) {
	e := newFeedEnv(t)
	second, err := workspace.NewService(e.db).CreateStore(context.Background(), e.org.ID, "Second", "EUR")
	if err != nil {
		t.Fatal(err)
	}
	e.order(e.mint(apikeys.NewIntegrationKey{}), "first")
	e.order(e.mint(apikeys.NewIntegrationKey{OrgID: e.org.ID, StoreID: second.ID}), "second")
	vendor := e.writeFeedEvents(events.VendorCreated, nil, 1)

	var inSecond []string
	if err := e.db.Raw(`SELECT id::text FROM events WHERE store_id = ? ORDER BY created_at, id`, second.ID).Scan(&inSecond).Error; err != nil {
		t.Fatal(err)
	}
	rows, _ := e.follow("store_id=" + second.ID.String())
	if len(inSecond) != 3 || strings.Join(rowIDs(rows), ",") != strings.Join(inSecond, ",") {
		t.Fatalf("store_id=second: got %v, want its three events %v", rowIDs(rows), inSecond)
	}
	rows, _ = e.follow("types=" + url.QueryEscape("order.created,vendor.created"))
	var types []string
	for _, r := range rows {
		types = append(types, r.Type)
	}
	if strings.Join(types, ",") != "order.created,order.created,vendor.created" || rows[2].ID != vendor[0] {
		t.Fatalf("types=order.created,vendor.created: got %v", rows)
	}
	var payment string
	if err := e.db.Raw(`SELECT id::text FROM events WHERE store_id = ? AND type = 'payment.recorded'`, second.ID).Scan(&payment).Error; err != nil {
		t.Fatal(err)
	}
	rows, _ = e.follow("store_id=" + second.ID.String() + "&types=payment.recorded")
	if len(rows) != 1 || rows[0].ID != payment {
		t.Fatalf("store_id and types: got %v, want the second store's payment %s", rows, payment)
	}
}

// Test events are never in the feed: types=webhook.test reads nothing, and one by its id is 404.
func TestEventFeedHoldsNoTestEvents(t *testing.T) {
	e := newFeedEnv(t)
	test := e.writeFeedEvents(events.WebhookTest, &e.store.ID, 1)
	real := e.writeFeedEvents(events.VendorCreated, nil, 1)
	if rows, _ := e.follow(""); strings.Join(rowIDs(rows), ",") != real[0] {
		t.Fatalf("every type: got %v, want only the vendor event %s", rowIDs(rows), real[0])
	}
	if rows, _ := e.follow("types=webhook.test"); len(rows) != 0 {
		t.Fatalf("types=webhook.test: got %v, want nothing", rowIDs(rows))
	}
	if rows, _ := e.follow("types=" + url.QueryEscape("webhook.test,vendor.created")); strings.Join(rowIDs(rows), ",") != real[0] {
		t.Fatalf("types=webhook.test,vendor.created: got %v, want only the vendor event", rowIDs(rows))
	}
	r := e.get("/v1/events/"+test[0], e.read)
	wantError(t, r.status, r.body, http.StatusNotFound, "not_found")
}

// limit is 50 by default and clamped to 100 above it, as every list's.
func TestEventFeedLimit(t *testing.T) {
	e := newFeedEnv(t)
	e.writeFeedEvents(events.ClientCreated, &e.store.ID, 120)
	if p := e.page(""); len(p.Rows) != 50 || p.Done {
		t.Fatalf("no limit: %d rows done=%v, want 50 and more", len(p.Rows), p.Done)
	}
	if p := e.page("limit=500"); len(p.Rows) != 100 || p.Done {
		t.Fatalf("limit=500: %d rows done=%v, want 100 (clamped) and more", len(p.Rows), p.Done)
	}
	if rows, _ := e.follow("limit=100"); len(rows) != 120 {
		t.Fatalf("following next: %d rows, want 120", len(rows))
	}
}

// The feed spends the read key's budget like every Read API call, and is refused past it.
func TestEventFeedSpendsTheReadKeysRateLimit(t *testing.T) {
	e := newFeedEnv(t)
	for i := range 599 {
		if r := e.get("/v1/vendors?limit=1", e.read); r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, r.status, r.body)
		}
	}
	if r := e.get("/v1/events", e.read); r.status != http.StatusOK {
		t.Fatalf("the 600th request, a feed page: %d %s", r.status, r.body)
	}
	r := e.get("/v1/events", e.read)
	wantError(t, r.status, r.body, http.StatusTooManyRequests, "rate_limited")
	r = e.get("/v1/events/"+uuid.NewString(), e.read)
	wantError(t, r.status, r.body, http.StatusTooManyRequests, "rate_limited")
}
