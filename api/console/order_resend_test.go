package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/models"
	"wds/test/deliverytest"
)

// The order page links to the order's events and resends them to one endpoint in one action; a
// member sees the link, not the form.
func TestTheOrderPageResendsTheOrdersEvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := e.userOf(e.ownerToken)
	var store uuid.UUID
	e.db.Raw("SELECT id FROM stores WHERE org_id = ?", e.org.ID).Row().Scan(&store)
	order := uuid.New()
	if err := e.db.Exec(`INSERT INTO orders (id, org_id, store_id, number, currency, subtotal_cents, total_cents, status)
		VALUES (?, ?, ?, 1005, 'USD', 100, 100, 'invoiced')`, order, e.org.ID, store).Error; err != nil {
		t.Fatal(err)
	}
	ep := models.Endpoint{ID: uuid.New(), OrgID: e.org.ID, URL: "https://receiver.example/hooks", EventTypes: models.TextArray{"order.created"},
		SecretSealed: []byte("x"), Enabled: true, MaxAttempts: 5, CreatedBy: owner}
	if err := e.db.Create(&ep).Error; err != nil {
		t.Fatal(err)
	}
	ev, _ := deliverytest.Emit(ctx, e.db, e.org.ID, nil, events.OrderCreated, map[string]any{"id": order, "number": "1005"})
	e.db.Exec("UPDATE events SET dispatched_at = now()")

	path := "/console/orders/" + order.String()
	c, csrf := e.signIn(e.ownerToken)
	_, page := e.do(c, "GET", path, nil)
	if !strings.Contains(page, `href="/console/events?order=1005"`) || !strings.Contains(page, `<option value="`+ep.ID.String()+`">https://receiver.example/hooks</option>`) {
		t.Fatalf("the order page:\n%s", page)
	}
	res, _ := e.do(c, "POST", path+"/resend", url.Values{"csrf": {csrf}, "endpoint": {ep.ID.String()}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != path {
		t.Fatalf("resend: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	var queued int64
	e.db.Model(&models.Dispatch{}).Where("event_id = ? AND endpoint_id = ? AND kind = 'resend'", ev, ep.ID).Count(&queued)
	if queued != 1 {
		t.Fatalf("%d chains queued, want 1", queued)
	}
	// Again at once: the chain is still in progress, and the page says so.
	res, page = e.do(c, "POST", path+"/resend", url.Values{"csrf": {csrf}, "endpoint": {ep.ID.String()}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(page, "<code>delivery_in_progress</code>") {
		t.Fatalf("a second resend: %d\n%s", res.StatusCode, page)
	}
	m, _ := e.signIn(e.memberToken)
	if _, page := e.do(m, "GET", path, nil); !strings.Contains(page, `href="/console/events?order=1005"`) || strings.Contains(page, `id="resend-order"`) {
		t.Fatalf("a member's order page:\n%s", page)
	}
}
