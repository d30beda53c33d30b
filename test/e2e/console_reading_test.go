package e2e

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"wds/internal/dev/temporaldev"
	"wds/internal/events"
)

// brokenWords lists, for every element sel matches on the page, each place where a line ends inside
// a word: the character before the break is not a space or punctuation (a URL's / . ? & = -, a
// response's , : ;) and the one after is not a space. A <br> or a block starts a line of its own.
// It measures the laid-out text, one character at a time, with Range.getClientRects.
const brokenWords = `(sel => {
	const bad = [], range = document.createRange();
	const ok = /[\s\/.?&=\-,:;…·]/;
	for (const el of document.querySelectorAll(sel)) {
		const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
		let prev = null;
		for (let n = walk.nextNode(); n; n = walk.nextNode()) {
			if (n.nodeType === Node.ELEMENT_NODE) {
				const d = getComputedStyle(n).display;
				if (n.tagName === "BR" || !d.startsWith("inline")) prev = null;
				continue;
			}
			for (let i = 0; i < n.textContent.length; i++) {
				range.setStart(n, i); range.setEnd(n, i + 1);
				const r = range.getClientRects()[0], ch = n.textContent[i];
				if (/\s/.test(ch)) { // a space, hanging at a line's end or collapsed: a break is fine after it
					if (prev) prev.ch = " ";
					continue;
				}
				if (!r || r.width === 0) continue;
				if (prev && r.top >= prev.r.bottom - 1 && !ok.test(prev.ch) && !/\s/.test(ch)) {
					bad.push(el.textContent.trim().slice(0, 60) + " ⏎ between " + JSON.stringify(prev.ch + ch));
				}
				prev = {r, ch};
			}
		}
	}
	return bad;
})`

// The console reads without squinting at 1280 px (issue 51): a long URL keeps to two lines beside
// a wide list of event types, no table breaks a word or an id, a response excerpt is monospace and
// stays in its cell, ids are shortened with the whole id on hover and in a copy, a column no row
// fills is left out, every time says UTC, codes read as words and "chain" is explained; after a
// resend the banner shows once and the new chain's status is its attempt's.
func TestTheConsoleReadsWithoutSquinting(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()
	var up atomic.Bool
	rc := newReceiverSaying(t, func(int) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusInternalServerError
	}, `{"error":"invalid_signature","detail":"the X-PC-Signature header did not verify against any active secret of endpoint acme-production-orders"}`)
	long := rc.srv.URL + "/hooks/acme-production/orders?tenant=acme-corp-eu-west&format=json"
	status, out := h.call("/admin/v1/rpc/outbound_webhook_create", h.ownerToken,
		map[string]any{"p_url": long, "p_event_types": events.Types(), "p_max_attempts": 2})
	if status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %v", status, out)
	}
	ep := uuid.MustParse(out["id"].(string))
	if status, out := h.call("/integrations/v1/orders", h.integrationKey, map[string]any{"external_id": "squint-1", "currency": "USD",
		"lines": []map[string]any{{"description": "Mug", "quantity": 1, "unit_price_cents": 1500}}}); status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, out)
	}
	waitFor(t, 30*time.Second, "the order's chain dropped", func() bool {
		rows := h.deliveries(ep)
		return len(rows) == 2 && rows[1].Status == "dropped"
	})
	event := h.deliveries(ep)[0].EventID.String()

	ctx := browser(t)
	h.signIn(ctx, h.ownerToken)
	endpointPage := h.api.URL + "/console/webhooks/" + ep.String()
	for path, sel := range map[string]string{
		"/console/webhooks": "main td", "/console/webhooks/" + ep.String(): "main td, main dd, main h1",
		"/console/": "main td", "/console/events": "main td", "/console/events/" + event: "main td, main h3",
	} {
		var bad []string
		if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+path), chromedp.Evaluate(brokenWords+`("`+sel+`")`, &bad)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(bad) > 0 {
			t.Errorf("%s breaks words mid-token:\n%s", path, strings.Join(bad, "\n"))
		}
	}

	// The URL beside every event type: two lines at most, not a narrow column of four or more.
	var url struct {
		Lines       int
		URL, Events float64
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks"), chromedp.Evaluate(`({
		Lines: new Set([...document.querySelector("td.url a").getClientRects()].map(r => Math.round(r.top))).size,
		URL: document.querySelector("td.url").getBoundingClientRect().width,
		Events: document.querySelector("td.events").getBoundingClientRect().width})`, &url)); err != nil {
		t.Fatal(err)
	}
	if url.Lines < 1 || url.Lines > 2 || url.URL < url.Events {
		t.Errorf("the endpoint's URL takes %d lines, %.0f px wide beside the events' %.0f px; want at most 2 lines, no narrower", url.Lines, url.URL, url.Events)
	}

	// The delivery log: the excerpt in monospace inside its cell, the event id shortened but whole
	// on hover and in a copy, the Error column left out (no error says more than its status), Next
	// attempt shown while an attempt has one and left out when the filter shows none.
	var excerpt struct {
		Font           string
		Inside         bool
		ID, Title      string
		Shown, Copied  float64
		CopiedText     string
		Error, Next    string
		Times, Created []string
	}
	err := chromedp.Run(ctx, chromedp.Navigate(endpointPage), chromedp.Evaluate(`(() => {
		const code = document.querySelector("#deliveries td.excerpt code"), cell = code.parentElement;
		const id = document.querySelector("#deliveries a.event code.id");
		getSelection().selectAllChildren(id);
		const shown = id.getBoundingClientRect().width;
		return {Font: getComputedStyle(code).fontFamily,
			Inside: code.getBoundingClientRect().right <= cell.getBoundingClientRect().right + 0.5,
			ID: id.textContent, Title: id.title, Shown: shown, Copied: id.scrollWidth, CopiedText: getSelection().toString(),
			Error: getComputedStyle(document.querySelector("#deliveries th.reason")).display,
			Next: getComputedStyle(document.querySelector("#deliveries th.next")).display,
			Times: [...document.querySelectorAll("#deliveries td.when")].map(td => td.textContent),
			Created: [document.querySelector("#endpoint-created").textContent]};
	})()`, &excerpt))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(excerpt.Font, "monospace") || !excerpt.Inside {
		t.Errorf("the excerpt is in %q, inside its cell: %v", excerpt.Font, excerpt.Inside)
	}
	if excerpt.ID != event || excerpt.Title != event || excerpt.CopiedText != event || excerpt.Shown >= excerpt.Copied {
		t.Errorf("the event id shows %.0f of %.0f px, reads %q, hovers %q, copies %q; want it shortened and whole", excerpt.Shown,
			excerpt.Copied, excerpt.ID, excerpt.Title, excerpt.CopiedText)
	}
	if excerpt.Error != "none" || excerpt.Next == "none" {
		t.Errorf("the Error column shows as %q (no row has one), Next attempt as %q (a row has one)", excerpt.Error, excerpt.Next)
	}
	for _, when := range append(excerpt.Times, excerpt.Created...) {
		if !strings.HasSuffix(when, " UTC") {
			t.Errorf("a time reads %q, without UTC", when)
		}
	}
	var next string
	if err := chromedp.Run(ctx, chromedp.Navigate(endpointPage+"?status=dropped"),
		chromedp.Evaluate(`getComputedStyle(document.querySelector("#deliveries th.next")).display`, &next)); err != nil || next != "none" {
		t.Errorf("with only dropped attempts, Next attempt shows as %q (%v)", next, err)
	}

	// Codes read as words, and "chain" is explained where the page counts chains.
	for path, codes := range map[string][]string{"/console/events": {"in_progress", "no_endpoints"},
		"/console/events/" + event: {"chain(s)", "in_progress"}, "/console/": {"chain(s)"}} {
		var text string
		if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+path), chromedp.Evaluate(`document.querySelector("main").innerText`, &text)); err != nil {
			t.Fatal(err)
		}
		for _, code := range codes {
			if strings.Contains(text, code) {
				t.Errorf("%s reads %q", path, code)
			}
		}
		if !strings.Contains(text, "A chain is one event's delivery to one endpoint") {
			t.Errorf("%s does not say what a chain is", path)
		}
	}

	// Resend: the banner once, then a reload without it; the new chain's status is its attempt's.
	up.Store(true)
	var location string
	var text string
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/events/"+event), chromedp.Click(`//button[text()="Resend"]`),
		chromedp.WaitVisible(`.notice`), chromedp.Location(&location), chromedp.Evaluate(`document.querySelector("main").innerText`, &text)); err != nil {
		t.Fatalf("resend: %v", err)
	}
	if strings.Contains(location, "done=") || strings.Contains(text, "in_progress") {
		t.Errorf("after the resend the address is %s and the page reads:\n%s", location, text)
	}
	waitFor(t, 30*time.Second, "the resent attempt recorded", func() bool { return len(h.deliveries(ep)) == 3 })
	var notices int
	var chains [][]string
	if err := chromedp.Run(ctx, chromedp.Reload(), chromedp.WaitVisible(`//h2[text()="Payload"]`),
		chromedp.Evaluate(`document.querySelectorAll(".notice").length`, &notices),
		chromedp.Evaluate(`[...document.querySelectorAll("section.chain")].map(s => {
			const st = [...s.querySelectorAll("td[class^=st-]")];
			return [s.querySelector("h3 small span").textContent, st.length ? st[st.length - 1].textContent : "no attempt"];
		})`, &chains)); err != nil {
		t.Fatal(err)
	}
	if notices != 0 {
		t.Errorf("the banner shows again on reload")
	}
	if len(chains) != 2 || chains[1][0] != "succeeded" {
		t.Errorf("the chains read %q, want the resent one succeeded", chains)
	}
	for _, ch := range chains {
		if want := map[string]string{"no attempt": "in progress"}[ch[1]]; ch[0] != ch[1] && ch[0] != want {
			t.Errorf("a chain reads %q over its last attempt %q", ch[0], ch[1])
		}
	}
}
