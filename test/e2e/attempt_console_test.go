package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"wds/internal/dev/temporaldev"
	"wds/internal/workspace"
	"wds/models"
)

// sentHeader is the value the page shows for a header in the first "sent" table under sel.
func sentHeader(ctx context.Context, t *testing.T, sel, name string) string {
	t.Helper()
	var v string
	xp := sel + `//table[@class="sent-headers"]//tr[td[1]/code[text()="` + name + `"]]/td[2]`
	if err := chromedp.Run(ctx, chromedp.TextContent(xp, &v, chromedp.BySearch)); err != nil { // a closed <details> is still in the page
		t.Fatalf("header %s under %s: %v", name, sel, err)
	}
	return strings.TrimSpace(v)
}

// spills names what sticks out of main's column on the current page, and how far the page is wider
// than the window (as the screenshots test measures it), with every <details> open.
func spills(ctx context.Context, t *testing.T) []string {
	t.Helper()
	var out []string
	err := chromedp.Run(ctx, chromedp.Evaluate(`(() => { document.querySelectorAll("details").forEach(d => d.open = true);
		const edge = document.querySelector("main").getBoundingClientRect().right + 1;
		const out = [...document.querySelectorAll("main *")].filter(e => e.getBoundingClientRect().right > edge)
			.slice(0, 5).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right - edge) + " px out");
		if (document.documentElement.scrollWidth > window.innerWidth) out.push("the page is " + document.documentElement.scrollWidth + " px wide");
		return out })()`, &out))
	if err != nil {
		t.Fatalf("measure the page: %v", err)
	}
	return out
}

// What each attempt sent and got back, in a real browser over a real delivery: the event page and
// the delivery's own page show the delivery id the customer quotes (copied by its button), the
// headers as the receiver got them (the signature the receiver checked, the custom header's value to
// the owner and never to a member), the receiver's answer, the error and the next attempt's time.
func TestAnAttemptShowsWhatItSentAndGotBack(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()
	rc := newReceiverSaying(t, func(int) int { return http.StatusInternalServerError }, "boom: database down")
	ep := h.endpoint(rc, 2, "order.created")
	if status, out := h.call("/admin/v1/rpc/outbound_webhook_update", h.ownerToken,
		map[string]any{"p_id": ep.id, "p_headers": map[string]string{"X-Tenant": "acme-secret"}}); status != http.StatusOK {
		t.Fatalf("headers: %d %v", status, out)
	}
	status, created := h.order("sent-1")
	if status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, created)
	}
	waitFor(t, 30*time.Second, "the chain to drop", func() bool {
		rows := h.deliveries(ep.id)
		return len(rows) == 2 && rows[1].Status == models.StatusDropped
	})
	first, got := h.deliveries(ep.id)[0], rc.deliveries()[0]
	id := first.ID.String()

	ctx := browser(t)
	if err := chromedp.Run(ctx, cdpbrowser.GrantPermissions([]cdpbrowser.PermissionType{cdpbrowser.PermissionTypeClipboardReadWrite,
		cdpbrowser.PermissionTypeClipboardSanitizedWrite}).WithOrigin(h.api.URL)); err != nil {
		t.Fatalf("clipboard permission: %v", err)
	}
	h.signIn(ctx, h.ownerToken)
	row := `//tr[@id="attempt-` + id + `"]`
	var cells, copied, clip string
	err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/events/"+first.EventID.String()),
		chromedp.WaitVisible(row, chromedp.BySearch), chromedp.Text(row, &cells, chromedp.BySearch),
		chromedp.Click(row+`//button[@class="copy link"]`, chromedp.BySearch),
		chromedp.WaitVisible(row+`//button[text()="Copied"]`, chromedp.BySearch), chromedp.Text(row+`//button`, &copied, chromedp.BySearch),
		chromedp.Evaluate(`navigator.clipboard.readText()`, &clip, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
		chromedp.Click(row+`/following-sibling::tr[1]//summary`, chromedp.BySearch))
	if err != nil {
		t.Fatalf("the event page: %v", err)
	}
	for _, want := range []string{id, "500 Internal Server Error", "boom: database down", first.NextAttemptAt.UTC().Format("2006-01-02 15:04:05")} {
		if !strings.Contains(cells, want) {
			t.Errorf("the attempt's row lacks %q: %q", want, cells)
		}
	}
	if clip != id {
		t.Errorf("Copy put %q on the clipboard, want the delivery id %s", clip, id)
	}
	if out := spills(ctx, t); len(out) > 0 {
		t.Errorf("the event page does not fit 1280 px: %v", out)
	}
	sent := row + `/following-sibling::tr[1]`
	for name, want := range map[string]string{"X-Pc-Delivery-Id": id, "Webhook-Signature": got.header.Get("Webhook-Signature"),
		"X-Pc-Signature": got.header.Get("X-PC-Signature"), "Webhook-Timestamp": got.header.Get("Webhook-Timestamp"), "X-Tenant": "acme-secret"} {
		if v := sentHeader(ctx, t, sent, name); v != want || want == "" {
			t.Errorf("the event page shows %s: %q, the receiver got %q", name, v, want)
		}
	}

	// The delivery's own page, from the endpoint's delivery log.
	var answer, excerpt, reason, next, shownID, order string
	err = chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks/"+ep.id.String()),
		chromedp.Click(`//table[@id="deliveries"]//a[@class="delivery"][@title[starts-with(., "`+id+`")]]`, chromedp.BySearch),
		chromedp.WaitVisible(`#attempt`, chromedp.ByQuery),
		chromedp.Text(`#delivery-id code`, &shownID, chromedp.ByQuery), chromedp.Text(`#attempt-answer`, &answer, chromedp.ByQuery),
		chromedp.Text(`#attempt-excerpt`, &excerpt, chromedp.ByQuery), chromedp.Text(`#attempt-error`, &reason, chromedp.ByQuery),
		chromedp.Text(`#attempt-next`, &next, chromedp.ByQuery), chromedp.Text(`#attempt-order`, &order, chromedp.ByQuery))
	if err != nil {
		t.Fatalf("the delivery page: %v", err)
	}
	if want := fmt.Sprintf("order %v", created["number"]); order != want {
		t.Errorf("the delivery page names %q, want %q", order, want)
	}
	if shownID != id || answer != "500 Internal Server Error" || excerpt != "boom: database down" || reason != "HTTP 500" ||
		next != first.NextAttemptAt.UTC().Format("2006-01-02 15:04:05")+" UTC" {
		t.Errorf("the delivery page: id %q, answer %q, excerpt %q, error %q, next %q", shownID, answer, excerpt, reason, next)
	}
	if out := spills(ctx, t); len(out) > 0 {
		t.Errorf("the delivery page does not fit 1280 px: %v", out)
	}
	if v := sentHeader(ctx, t, `//main`, "X-Tenant"); v != "acme-secret" {
		t.Errorf("the owner reads X-Tenant as %q", v)
	}

	// A member reads every header but the custom one's value, on both pages.
	_, memberToken, err := workspace.NewService(h.db).CreateUser(h.ctx, h.org, "member@acme.test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	member := browser(t)
	h.signIn(member, memberToken)
	for _, path := range []string{"/console/deliveries/" + id, "/console/events/" + first.EventID.String()} {
		var html string
		if err := chromedp.Run(member, chromedp.Navigate(h.api.URL+path), chromedp.OuterHTML("main", &html)); err != nil {
			t.Fatalf("%s as a member: %v", path, err)
		}
		if strings.Contains(html, "acme-secret") {
			t.Errorf("%s shows a member the custom header's value", path)
		}
		if v := sentHeader(member, t, `//main`, "X-Tenant"); !strings.HasPrefix(v, "hidden") {
			t.Errorf("%s shows a member X-Tenant as %q", path, v)
		}
		if v := sentHeader(member, t, `//main`, "Webhook-Signature"); v != got.header.Get("Webhook-Signature") {
			t.Errorf("%s shows a member the signature as %q", path, v)
		}
	}
}
