package e2e

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wds/internal/dev/temporaldev"
)

// The support desk in a real browser: a receiver was down for three orders; support finds the
// first order's event by its number, reads the failed attempt and resends it, sees the two drops
// still unrecovered after the resend succeeded, then protects the receiver with a rate limit and a
// header, counts the outage's dropped chains (the resent one skipped, and said so), recovers them
// and watches the recovery's page follow it to the end without a reload; nothing is left unrecovered.
func TestTheSupportDeskInABrowser(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()
	var up atomic.Bool
	rc := newReceiver(t, func(int) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	ep := h.endpoint(rc, 1, "order.created")
	since := time.Now().UTC().Add(-time.Minute).Format("2006-01-02T15:04")
	var number string
	for i, ext := range []string{"desk-1", "desk-2", "desk-3"} {
		status, out := h.order(ext)
		if status != http.StatusCreated {
			t.Fatalf("order: %d %v", status, out)
		}
		if i == 0 {
			number = out["number"].(string)
		}
	}
	waitFor(t, 30*time.Second, "three dropped chains", func() bool {
		n := 0
		for _, d := range h.deliveries(ep.id) {
			if d.Status == "dropped" {
				n++
			}
		}
		return n == 3
	})
	up.Store(true)

	ctx := browser(t)
	h.signIn(ctx, h.ownerToken)
	// Find the order's event by its number, open it, see the failed attempt, resend it.
	var eventPage string
	// The unfiltered list already shows dropped rows: wait for the search's own page (its form keeps
	// the number as the input's value) before reading one, or the click may land on a row of the page
	// being replaced.
	err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/events"),
		chromedp.SendKeys(`input[name=order]`, number), chromedp.Click(`//button[text()="Search"]`),
		chromedp.WaitVisible(`input[name=order][value="`+number+`"]`),
		chromedp.WaitVisible(`//td[@class="st-dropped"]`), chromedp.Click(`//tr[td[@class="st-dropped"]]//a[text()="Open"]`),
		chromedp.WaitVisible(`//h2[text()="Payload"]`), chromedp.OuterHTML("main", &eventPage))
	if err != nil {
		t.Fatalf("find the order's event: %v", err)
	}
	if !strings.Contains(eventPage, "503 Service Unavailable") || !strings.Contains(eventPage, `"number": "`+number+`"`) {
		t.Fatalf("the event's page lacks the attempt or the payload:\n%s", eventPage)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`//button[text()="Resend"]`), chromedp.WaitVisible(`.notice`)); err != nil {
		t.Fatalf("resend: %v", err)
	}
	waitFor(t, 30*time.Second, "the resent event", func() bool { return rc.count() == 4 })

	// The resend succeeded; the endpoint still owes the other two.
	page := h.api.URL + "/console/webhooks/" + ep.id.String()
	waitFor(t, 30*time.Second, "two drops unrecovered", func() bool {
		var cell string
		return chromedp.Run(ctx, chromedp.Navigate(page), chromedp.Text(`#unrecovered`, &cell, chromedp.ByQuery)) == nil &&
			strings.HasPrefix(strings.TrimSpace(cell), "2, oldest ")
	})
	// Protect the receiver, count the outage, recover it, watch it complete.
	err = chromedp.Run(ctx, chromedp.Navigate(page),
		chromedp.SetValue(`input[name=rate_limit]`, "5"), chromedp.SetValue(`textarea[name=headers]`, "X-Tenant: acme"),
		chromedp.Click(`//button[text()="Save"]`), chromedp.WaitVisible(`.notice`),
		chromedp.SendKeys(`input[name=recover_since]`, since), chromedp.Click(`//button[text()="Count"]`),
		chromedp.WaitVisible(`//p[contains(., "This re-fires")]/strong[text()="2"]`),
		chromedp.WaitVisible(`//p[@id="skipped"][contains(., "already went to this endpoint again")]/strong[text()="1"]`),
		chromedp.Click(`//button[text()="Recover"]`), chromedp.WaitVisible(`.notice`),
		// The recovery's own page follows it to the end by itself: no navigation here.
		chromedp.WaitVisible(`//h1[starts-with(., "Recovery of")]`), chromedp.WaitVisible(`//strong[text()="completed"]`))
	if err != nil {
		t.Fatalf("settings and recovery: %v", err)
	}
	waitFor(t, 30*time.Second, "the recovered chains", func() bool { return rc.count() == 6 })
	for _, d := range rc.deliveries()[4:] {
		if d.header.Get("X-Tenant") != "acme" {
			t.Errorf("a recovered delivery without the custom header: %v", d.header)
		}
	}
	waitFor(t, 30*time.Second, "the recovery shown completed", func() bool {
		var html string
		return chromedp.Run(ctx, chromedp.Navigate(page), chromedp.OuterHTML("main", &html)) == nil &&
			strings.Contains(html, `class="st-completed">completed</strong>, 2 of 2 chains started`) &&
			strings.Contains(html, `<td id="unrecovered">none</td>`)
	})
	if rc.count() != 6 {
		t.Fatalf("the receiver got %d deliveries, want 6: the resent event went once more, not twice", rc.count())
	}
	// The nav's Recoveries lists it; its page says what it delivered.
	var delivered string
	err = chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/"), chromedp.Click(`//nav/a[text()="Recoveries"]`),
		chromedp.WaitVisible(`#recoveries`), chromedp.Click(`//table[@id="recoveries"]//a[text()="details"]`),
		chromedp.WaitVisible(`#outcomes`), chromedp.Text(`#outcomes`, &delivered, chromedp.ByQuery))
	if err != nil {
		t.Fatalf("the recoveries page: %v", err)
	}
	if want := "Of the 2 chains started: 2 delivered, 0 still retrying, 0 dropped again."; strings.TrimSpace(delivered) != want {
		t.Fatalf("the recovery says %q, want %q", delivered, want)
	}
}
