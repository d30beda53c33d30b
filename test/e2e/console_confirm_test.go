package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wds/internal/dev/temporaldev"
	"wds/models"
)

// No one-click harm in a real browser: Rotate secret, Disable and Delete each open a page naming
// the endpoint and what its receiver will see, with no script; Rotate offers the grace with 24
// hours chosen, and confirming keeps the old secret signing for it; leaving the page changes nothing.
func TestTheConsoleAsksBeforeItBreaksAReceiver(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	ctx := browser(t)
	h.signIn(ctx, h.ownerToken)
	rc := newReceiver(t, ok)
	h.addEndpoint(ctx, rc.srv.URL+"/careful", "5")
	ep := h.newestEndpoint()
	row := `//tr[td/a[contains(., "/careful")]]`

	// A description, given on the endpoint's page, is shown beside its URL on the list and on the
	// pages that ask first.
	var described string
	err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks/"+ep.ID.String()),
		chromedp.SetValue(`input[name=description]`, "Acme's order sync"), chromedp.Click(`//button[text()="Save"]`),
		chromedp.WaitVisible(`.notice`), chromedp.Navigate(h.api.URL+"/console/webhooks"),
		chromedp.Text(row+`//span[@class="description muted"]`, &described))
	if err != nil || described != "Acme's order sync" {
		t.Fatalf("the description on the list: %q %v", described, err)
	}

	var consequence, grace string
	var scripts int
	err = chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks"), chromedp.Click(row+`//button[text()="Rotate secret"]`),
		chromedp.WaitVisible(`#consequence`), chromedp.Text(`#consequence`, &consequence, chromedp.ByQuery),
		chromedp.Value(`select[name=grace_seconds]`, &grace, chromedp.ByQuery),
		chromedp.Evaluate(`document.scripts.length`, &scripts))
	if err != nil {
		t.Fatalf("rotate: %v", err)
	}
	var page string
	if err := chromedp.Run(ctx, chromedp.OuterHTML("main", &page)); err != nil || !strings.Contains(page, "Acme's order sync") {
		t.Fatalf("the rotation's page does not name the endpoint's description: %v\n%s", err, page)
	}
	if !strings.Contains(consequence, "signature checks fail") || grace != "86400" || scripts != 0 {
		t.Fatalf("the rotation's page says %q with grace %q and %d scripts", consequence, grace, scripts)
	}
	var secret string
	err = chromedp.Run(ctx, chromedp.Click(`//button[starts-with(., "Rotate secret:")]`), chromedp.WaitVisible(`#secret`),
		chromedp.Text(`#secret`, &secret, chromedp.ByQuery))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("rotated: %q %v", secret, err)
	}
	var rotated models.Endpoint
	h.db.Where("id = ?", ep.ID).Take(&rotated)
	if rotated.PreviousSecretUntil == nil || time.Until(*rotated.PreviousSecretUntil) < 23*time.Hour {
		t.Fatalf("the old secret signs until %v, want 24 hours from now", rotated.PreviousSecretUntil)
	}

	// Disable asks first; keeping it changes nothing; confirming disables it.
	err = chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks"), chromedp.Click(row+`//button[text()="Disable"]`),
		chromedp.WaitVisible(`#consequence`), chromedp.Text(`#consequence`, &consequence, chromedp.ByQuery),
		chromedp.Click(`//a[text()="Keep it as it is"]`), chromedp.WaitVisible(`//h1[text()="Webhooks"]`))
	if err != nil || !strings.Contains(consequence, "gets no more events") {
		t.Fatalf("disable's page %q: %v", consequence, err)
	}
	if h.newestEndpoint().Enabled != true {
		t.Fatal("leaving the confirmation disabled the endpoint")
	}
	err = chromedp.Run(ctx, chromedp.Click(row+`//button[text()="Disable"]`), chromedp.WaitVisible(`#consequence`),
		chromedp.Click(`//button[starts-with(., "Disable:")]`), chromedp.WaitVisible(`.notice`))
	if err != nil || h.newestEndpoint().Enabled {
		t.Fatalf("confirmed disable: %v", err)
	}
	// Delete too.
	err = chromedp.Run(ctx, chromedp.Click(row+`//button[text()="Delete"]`), chromedp.WaitVisible(`#consequence`),
		chromedp.Text(`#consequence`, &consequence, chromedp.ByQuery),
		chromedp.Click(`//button[starts-with(., "Delete:")]`), chromedp.WaitVisible(`.notice`))
	if err != nil || !strings.Contains(consequence, "for good") || h.newestEndpoint().DeletedAt == nil {
		t.Fatalf("confirmed delete %q: %v", consequence, err)
	}
}
