package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"wds/internal/apikeys"
	"wds/internal/dev/temporaldev"
	"wds/models"
)

// texts reads the trimmed text of every node sel matches on the current page.
func texts(ctx context.Context, t *testing.T, sel string) []string {
	t.Helper()
	var out []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll(`+"`"+sel+"`"+`)].map(n => n.textContent.trim())`, &out)); err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return out
}

// The console says which order and who acted, in a real browser: the orders list pages both ways
// and finds orders by number or by the client's email (any case), each with its client; the
// events list pages both ways; the connectors list says when each key was created and when it
// expires; the delivery log and the overview name each dropped attempt's order by its number; and
// the audit log answers "who cancelled order N?" with the connector key that did it.
func TestTheConsoleSaysWhichOrderAndWhoActed(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()
	expires := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second)
	shop, err := apikeys.NewService(h.db, h.box).CreateIntegrationKey(h.ctx, apikeys.NewIntegrationKey{OrgID: h.org, StoreID: h.store,
		ActorID: h.owner, Label: "Shop", Scopes: models.IntegrationScopes, ExpiresAt: &expires})
	if err != nil {
		t.Fatal(err)
	}
	order := func(ext string, client bool) string {
		body := map[string]any{"external_id": ext, "currency": "USD",
			"lines": []map[string]any{{"description": "Mug", "quantity": 1, "unit_price_cents": 1500}}}
		if client {
			body["client"] = map[string]any{"external_id": "ada", "display_name": "Ada Lovelace", "email": "ada@example.test"}
		}
		status, out := h.call("/integrations/v1/orders", shop.Plaintext, body)
		if status != http.StatusCreated {
			t.Fatalf("order %s: %d %v", ext, status, out)
		}
		return out["number"].(string)
	}
	for i := range 52 {
		order(fmt.Sprint("bulk-", i), false)
	}
	rc := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
	ep := h.endpoint(rc, 1, "order.created")
	first, second, third := order("ada-1", true), order("ada-2", true), order("plain", false)
	waitFor(t, 30*time.Second, "three dropped chains", func() bool { return len(h.deliveries(ep.id)) == 3 })
	status, out := h.call("/integrations/v1/orders/"+orderID(t, h, second)+"/cancel", shop.Plaintext, nil)
	if status != http.StatusOK {
		t.Fatalf("cancel: %d %v", status, out)
	}

	ctx := browser(t)
	h.signIn(ctx, h.ownerToken)

	// Orders: 55 in pages of 50, both ways, newest change first (the cancelled one), each with its client.
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/orders")); err != nil {
		t.Fatal(err)
	}
	page1 := texts(ctx, t, "#orders td:first-child")
	if len(page1) != 50 || page1[0] != second || page1[1] != third || len(texts(ctx, t, "a.newer, a.first")) != 0 {
		t.Fatalf("the first page of orders: %d rows from %v, with newer links %v", len(page1), page1[:1], texts(ctx, t, "a.newer, a.first"))
	}
	clients := texts(ctx, t, "#orders td.client")
	if ada := "Ada Lovelace <ada@example.test>"; clients[0] != ada || clients[1] != "–" || clients[2] != ada {
		t.Fatalf("clients %v", clients[:3])
	}
	if err := chromedp.Run(ctx, chromedp.Click(`a.older`), chromedp.WaitVisible(`a.newer`)); err != nil {
		t.Fatal(err)
	}
	if page2 := texts(ctx, t, "#orders td:first-child"); len(page2) != 5 || len(texts(ctx, t, "a.older")) != 0 || len(texts(ctx, t, "a.first")) != 1 {
		t.Fatalf("the second page of orders: %v, older %v", page2, texts(ctx, t, "a.older"))
	}
	if err := chromedp.Run(ctx, chromedp.Click(`a.newer`), chromedp.WaitVisible(`a.older`)); err != nil {
		t.Fatal(err)
	}
	if back := texts(ctx, t, "#orders td:first-child"); fmt.Sprint(back) != fmt.Sprint(page1) || len(texts(ctx, t, "a.newer")) != 0 {
		t.Fatalf("Newer from the second page: %d rows from %v, want the first page", len(back), back[:1])
	}
	// Search by the client's email in any case, by number, and by neither.
	for search, want := range map[string]string{"ADA@Example.test": second + "," + first, "#" + third: third} {
		if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/orders"), chromedp.SendKeys(`input[name=q]`, search),
			chromedp.Click(`#order-search button`), chromedp.WaitVisible(`//a[text()="All orders"]`)); err != nil { // only a search's answer has it
			t.Fatal(err)
		}
		if got := strings.Join(texts(ctx, t, "#orders td:first-child"), ","); got != want {
			t.Errorf("search %q: orders %s, want %s", search, got, want)
		}
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/orders?q=mug")); err != nil {
		t.Fatal(err)
	}
	if e := texts(ctx, t, ".error"); len(e) != 1 || !strings.Contains(e[0], "client's email") {
		t.Errorf("a search by neither: %v", e)
	}

	// Events: more than a page, Older then Newer comes back to the first page.
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/events")); err != nil {
		t.Fatal(err)
	}
	events1 := texts(ctx, t, "table td:first-child")
	if err := chromedp.Run(ctx, chromedp.Click(`a.older`), chromedp.WaitVisible(`a.first`), chromedp.Click(`a.newer`),
		// The first page, reached by Newer, has no Newer link; the second has an Older one too once
		// there are more than two pages, so waiting for Older alone could read the second.
		chromedp.WaitNotPresent(`a.newer`), chromedp.WaitVisible(`a.older`)); err != nil {
		t.Fatal(err)
	}
	if back := texts(ctx, t, "table td:first-child"); len(events1) != 50 || fmt.Sprint(back) != fmt.Sprint(events1) {
		t.Fatalf("events: Newer from the second page gives %d rows, want the first page's %d", len(back), len(events1))
	}

	// Connectors: created and expires.
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/connectors"),
		chromedp.WaitVisible(`//td[text()="Shop"]`)); err != nil {
		t.Fatal(err)
	}
	row := texts(ctx, t, `tr:has(td:first-child:not([colspan])) td.expires`)
	if !strings.Contains(strings.Join(row, "|"), expires.Format("2006-01-02 15:04:05")) || !strings.Contains(strings.Join(row, "|"), "never") ||
		len(texts(ctx, t, "td.created")) != 2 {
		t.Errorf("connectors' expiry %v, created %v", row, texts(ctx, t, "td.created"))
	}

	// The delivery log and the overview name each dropped attempt's order.
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks/"+ep.id.String())); err != nil {
		t.Fatal(err)
	}
	want := "order " + first + ",order " + second + ",order " + third // the attempts ran at once: any order
	sorted := func(sel string) string { s := texts(ctx, t, sel); slices.Sort(s); return strings.Join(s, ",") }
	if got := sorted("#deliveries a.order"); got != want {
		t.Errorf("the delivery log's orders %s, want %s", got, want)
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/")); err != nil {
		t.Fatal(err)
	}
	if got := sorted("#latest a.order"); got != want {
		t.Errorf("the overview's latest drops name orders %s, want %s", got, want)
	}

	// Who cancelled the second order? The Shop key. The log fits the page even with a resend's
	// chains, whose ids it cannot name.
	chains := make([]map[string]any, 4)
	for i := range chains {
		id := uuid.NewString()
		chains[i] = map[string]any{"chain_id": id, "endpoint_id": ep.id, "workflow_id": "webhook-resend/" + id + "/" + uuid.NewString() + "/1"}
	}
	details, _ := json.Marshal(map[string]any{"endpoint_id": ep.id, "chains": chains})
	if err := h.db.Exec(`INSERT INTO audit_log (id, org_id, actor_id, action, target_type, target_id, details)
		VALUES (?, ?, ?, 'order.resend', 'order', ?, ?::jsonb)`, uuid.New(), h.org, h.owner, orderID(t, h, first), string(details)).Error; err != nil {
		t.Fatal(err)
	}
	var overflow bool
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/audit"),
		chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth`, &overflow)); err != nil {
		t.Fatal(err)
	}
	if overflow {
		t.Errorf("the audit log is wider than the 1280 px window")
	}
	resend := texts(ctx, t, `#audit tr:has(td.target a[href*="/orders/"]) td.details`)
	if joined := strings.Join(resend, "|"); strings.Contains(joined, chains[0]["chain_id"].(string)) ||
		!strings.Contains(joined, "chain_id: "+chains[0]["chain_id"].(string)[:8]+"…") || !strings.Contains(joined, "endpoint: "+rc.srv.URL) {
		t.Errorf("the resend's details show whole ids or no endpoint URL: %q", resend)
	}
	if got := texts(ctx, t, `#audit tr:has(td.target a[href*="/orders/"]) td.target`); !slices.Contains(got, "order "+first) {
		t.Errorf("the audit log's order targets %v, want order %s among them", got, first)
	}
	var cancel []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll("#audit tr")].filter(r => r.children[2] && r.children[2].textContent === "order.cancel").
		map(r => r.querySelector("td.actor").textContent + " | " + r.querySelector("td.target").textContent.trim())`, &cancel)); err != nil {
		t.Fatal(err)
	}
	if len(cancel) != 1 || cancel[0] != "connector key Shop ("+shop.Key.KeyHint+"…) | order "+second {
		t.Errorf("the audit log's cancel rows %q", cancel)
	}
}

// orderID is the id of the harness org's order with that number.
func orderID(t *testing.T, h *harness, number string) string {
	t.Helper()
	var id string
	if err := h.db.Raw("SELECT id::text FROM orders WHERE org_id = ? AND number = ?", h.org, number).Row().Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
