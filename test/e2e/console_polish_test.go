package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"wds/internal/dev/temporaldev"
	"wds/internal/workspace"
)

// text reads the text of the first node sel matches on the page at path.
func (h *harness) text(ctx context.Context, path, sel string) string {
	h.t.Helper()
	var s string
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+path), chromedp.Text(sel, &s, chromedp.ByQuery)); err != nil {
		h.t.Fatalf("%s %s: %v", path, sel, err)
	}
	return strings.TrimSpace(s)
}

// The console in a browser reads like a product: the nav marks the page, money has its currency's
// decimals, people and stores have names, the order page tells the whole order, a failed form keeps
// every field and choice, and errors are pages with a way back.
func TestTheConsoleReadsLikeAProduct(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()
	ws := workspace.NewService(h.db)
	yen, err := ws.CreateStore(h.ctx, h.org, "Tokyo", "JPY")
	if err != nil {
		t.Fatal(err)
	}
	// An order with a client, two lines, shipping, tax and a payment, and one in yen.
	usd := h.must(http.StatusCreated, "POST", "/integrations/v1/orders", h.integrationKey, map[string]any{
		"external_id": "polish-1", "currency": "USD", "shipping_cents": 500, "tax_cents": 1000,
		"client": map[string]any{"external_id": "c-1", "display_name": "Ada Lovelace", "email": "ada@example.test"},
		"lines": []map[string]any{{"description": "Mug", "quantity": 2, "unit_price_cents": 1550},
			{"description": "Poster", "quantity": 1, "unit_price_cents": 120000}},
		"payment": map[string]any{"external_id": "pay-polish-1", "amount_cents": 124600, "method": "card"},
	})
	h.must(http.StatusCreated, "POST", "/integrations/v1/orders", h.integrationKey, map[string]any{
		"external_id": "polish-2", "currency": "JPY", "lines": []map[string]any{{"description": "Tea", "quantity": 3, "unit_price_cents": 4500}},
	})

	ctx := browser(t)
	h.signIn(ctx, h.ownerToken)
	for path, want := range map[string]string{"/console/": "Overview", "/console/orders": "Orders",
		"/console/orders/" + usd["id"].(string): "Orders", "/console/audit": "Audit log", "/console/webhooks": "Webhooks"} {
		if got := h.text(ctx, path, `header nav a[aria-current="page"]`); got != want {
			t.Errorf("%s: the nav marks %q, want %q", path, got, want)
		}
	}

	// Money: dollars and cents, whole yen.
	var totals []string
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/orders"),
		chromedp.Evaluate(`[...document.querySelectorAll("td.total")].map(td => td.textContent.trim()).sort()`, &totals)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(totals, "|") != "1,246.00 USD|13,500 JPY" {
		t.Errorf("order totals %q", totals)
	}

	// The order page: client, source, line totals, payments.
	order := "/console/orders/" + usd["id"].(string)
	for sel, want := range map[string]string{"#client": "Ada Lovelace <ada@example.test>", "#source": "imported",
		"#total": "1,246.00 USD", "#paid": "1,246.00 USD", "tr.payment td.num": "1,246.00 USD"} {
		if got := h.text(ctx, order, sel); !strings.HasPrefix(got, want) {
			t.Errorf("order page %s = %q, want %q", sel, got, want)
		}
	}
	var lineTotals []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll("td.line-total")].map(td => td.textContent)`, &lineTotals)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(lineTotals, "|") != "31.00 USD|1,200.00 USD" {
		t.Errorf("line totals %q", lineTotals)
	}

	// The webhooks page states the ladder this process runs; a refused endpoint keeps URL, events
	// and attempts.
	if got := h.text(ctx, "/console/webhooks", "#ladder"); got != "+1s, +2s" {
		t.Errorf("ladder %q, want the harness's +1s, +2s", got)
	}
	var url, attempts string
	var checked []string
	err = chromedp.Run(ctx, chromedp.SendKeys(`input[name=url]`, "http://plain.example.test/hooks"),
		chromedp.Click(`input[value="order.created"]`), chromedp.Click(`input[value="payment.refunded"]`),
		chromedp.SendKeys(`input[name=max_attempts]`, "3"), chromedp.Click(`//button[text()="Add endpoint"]`),
		chromedp.WaitVisible(`.error`), chromedp.Value(`input[name=url]`, &url), chromedp.Value(`input[name=max_attempts]`, &attempts),
		chromedp.Evaluate(`[...document.querySelectorAll("input[name=events]:checked")].map(i => i.value)`, &checked))
	if err != nil {
		t.Fatal(err)
	}
	if url != "http://plain.example.test/hooks" || attempts != "3" || strings.Join(checked, ",") != "order.created,payment.refunded" {
		t.Errorf("the refused endpoint form came back as url %q, attempts %q, events %q", url, attempts, checked)
	}

	// A refused connector key keeps its store, scopes, format and signature choice; a created one is
	// listed with its store's name, and the audit log names its creator by email.
	var label, allow, store, format string
	var scopes []string
	var signed bool
	err = chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/connectors"),
		chromedp.SetValue(`select[name=store_id]`, yen.ID.String()), chromedp.SendKeys(`input[name=label]`, "till"),
		chromedp.Click(`input[value="orders:write"]`), chromedp.Click(`input[value="clients:write"]`),
		chromedp.SetValue(`select[name=format]`, "nativestore"), chromedp.Click(`input[name=require_signature]`),
		chromedp.SendKeys(`input[name=ip_allowlist]`, "not-a-range"), chromedp.Click(`//button[text()="Create connector key"]`),
		chromedp.WaitVisible(`.error`), chromedp.Value(`input[name=label]`, &label), chromedp.Value(`input[name=ip_allowlist]`, &allow),
		chromedp.Value(`select[name=store_id]`, &store), chromedp.Value(`select[name=format]`, &format),
		chromedp.Evaluate(`[...document.querySelectorAll("input[name=scopes]:checked")].map(i => i.value)`, &scopes),
		chromedp.Evaluate(`document.querySelector("input[name=require_signature]").checked`, &signed))
	if err != nil {
		t.Fatal(err)
	}
	if label != "till" || allow != "not-a-range" || store != yen.ID.String() || format != "nativestore" || !signed ||
		strings.Join(scopes, ",") != "orders:write,clients:write" {
		t.Errorf("the refused connector form came back as %q %q %q %q %v %q", label, allow, store, format, signed, scopes)
	}
	err = chromedp.Run(ctx, chromedp.Clear(`input[name=ip_allowlist]`, chromedp.ByQuery), chromedp.Click(`//button[text()="Create connector key"]`),
		chromedp.WaitVisible(`#secret`))
	if err != nil {
		t.Fatal(err)
	}
	var stores []string
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/connectors"),
		chromedp.Evaluate(`[...document.querySelectorAll("td.store")].map(td => td.textContent)`, &stores)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(stores, "|"), "Tokyo") || !strings.Contains(strings.Join(stores, "|"), "Main") {
		t.Errorf("connector stores %q, want names", stores)
	}
	if got := h.text(ctx, "/console/audit", "td.actor"); got != "owner@acme.test" {
		t.Errorf("the audit log's actor is %q, want the owner's email", got)
	}

	// The vendor grid: every input labelled by its column; a refused row edit keeps that row as typed
	// and leaves the add form empty.
	h.must(http.StatusCreated, "POST", "/admin/v1/orgs/"+h.org.String()+"/vendors", h.ownerToken, map[string]any{"store_id": h.store, "name": "Paper Co"})
	var labels []string
	err = chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/vendors"),
		chromedp.Evaluate(`[...document.querySelectorAll("table.grid input:not([type=hidden])")].map(i => document.getElementById(i.getAttribute("aria-labelledby"))?.textContent ?? "")`, &labels))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(labels, ",") != "Name,Email,Phone,Notes" {
		t.Errorf("vendor grid labels %q", labels)
	}
	var rowEmail, rowName, addName string
	err = chromedp.Run(ctx, chromedp.SetValue(`table.grid input[name=email]`, "not an email"),
		chromedp.SetValue(`table.grid input[name=name]`, "Paper Company"),
		chromedp.Click(`//table//button[text()="Save"]`), chromedp.WaitVisible(`.error`),
		chromedp.Value(`table.grid input[name=email]`, &rowEmail), chromedp.Value(`table.grid input[name=name]`, &rowName),
		chromedp.Value(`form.card input[name=name]`, &addName))
	if err != nil {
		t.Fatal(err)
	}
	if rowEmail != "not an email" || rowName != "Paper Company" || addName != "" {
		t.Errorf("the refused row came back as %q %q, the add form's name %q", rowName, rowEmail, addName)
	}
	// The client grid: every field labelled (Type a choice), and an email input shows a whole
	// address at 1280 px.
	var emailFits bool
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/clients"),
		chromedp.Evaluate(`[...document.querySelectorAll("table.grid input:not([type=hidden]), table.grid select")].map(i => document.getElementById(i.getAttribute("aria-labelledby"))?.textContent ?? "")`, &labels),
		chromedp.Evaluate(`(i => { i.value = "ada.lovelace@example.test"; return i.scrollWidth <= i.clientWidth })(document.querySelector("table.grid input[name=email]"))`, &emailFits)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(labels, ",") != "Email,First name,Last name,Display name,Phone,Type,Tags" {
		t.Errorf("client grid labels %q", labels)
	}
	if !emailFits {
		t.Errorf("the client grid's email input cuts ada.lovelace@example.test")
	}

	// Errors are pages with a way back, never raw text: an unknown page, a missing order.
	for path, title := range map[string]string{"/console/no-such-page": "Not found", "/console/orders/" + uuid.NewString(): "Not Found"} {
		var h1, back string
		if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+path), chromedp.Text(`h1`, &h1, chromedp.ByQuery),
			chromedp.AttributeValue(`main a[href="/console/"]`, "href", &back, nil, chromedp.ByQuery)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h1 != title || back != "/console/" {
			t.Errorf("%s: heading %q, link back %q", path, h1, back)
		}
	}
}
