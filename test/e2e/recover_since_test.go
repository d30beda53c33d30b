package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/internal/dev/temporaldev"
	"wds/internal/events"
	"wds/models"
	"wds/test/deliverytest"
	"wds/workflows/contract"
)

// A bad time keeps the page whole: Count with a since in the future, or one that is no time at all,
// answers beside the field, and the endpoint's page is otherwise as without it (the delivery log,
// its text, no banner, no count). The presets beside the field fill it and count.
func TestABadSinceKeepsTheEndpointPageWhole(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	rc := newReceiver(t, ok)
	ep := h.endpoint(rc, 1, "order.created")
	for range 3 { // three dropped chains of the last hour, written as an attempt writes them
		ev, err := deliverytest.Emit(h.ctx, h.db, h.org, nil, events.OrderCreated, map[string]any{"id": uuid.New()})
		if err != nil {
			t.Fatal(err)
		}
		code := 503
		_, err = delivery.RecordAttempt(h.ctx, h.db, &models.Delivery{ID: uuid.New(), OrgID: h.org, EventID: ev, EndpointID: ep.id,
			EventType: events.OrderCreated, ChainID: uuid.New(), WorkflowID: contract.EventWorkflowID(ev), Attempt: 1,
			Status: models.StatusDropped, ResponseStatus: &code, Error: "HTTP 503", AttemptedAt: time.Now().Add(-30 * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx := browser(t)
	h.signIn(ctx, h.ownerToken)
	page := h.api.URL + "/console/webhooks/" + ep.id.String()
	var wholeLog, wholeText string
	if err := chromedp.Run(ctx, chromedp.Navigate(page), chromedp.Text(`#deliveries`, &wholeLog, chromedp.ByQuery),
		chromedp.Text(`section.log p.muted`, &wholeText, chromedp.ByQuery)); err != nil {
		t.Fatalf("the endpoint's page: %v", err)
	}
	if strings.Count(wholeLog, "HTTP 503")+strings.Count(wholeLog, "503 Service Unavailable") < 3 || !strings.Contains(wholeText, "newest first, 20 a page") {
		t.Fatalf("the page without a since: log %q, text %q", wholeLog, wholeText)
	}

	for since, detail := range map[string]string{
		time.Now().UTC().Add(2 * time.Hour).Format("2006-01-02T15:04"): "since is in the future",
		"yesterday at nine": "since must be a date and time",
	} {
		var fieldError, log, text, typed, main string
		err := chromedp.Run(ctx, chromedp.Navigate(page), chromedp.SetValue(`input[name=recover_since]`, since, chromedp.ByQuery),
			chromedp.Click(`//button[text()="Count"]`, chromedp.BySearch), chromedp.WaitVisible(`#recover-form #recover-error`, chromedp.ByQuery),
			chromedp.Text(`#recover-error`, &fieldError, chromedp.ByQuery), chromedp.Text(`#deliveries`, &log, chromedp.ByQuery),
			chromedp.Text(`section.log p.muted`, &text, chromedp.ByQuery), chromedp.Value(`input[name=recover_since]`, &typed, chromedp.ByQuery),
			chromedp.OuterHTML(`main`, &main, chromedp.ByQuery))
		if err != nil {
			t.Fatalf("count since %q: %v", since, err)
		}
		if !strings.Contains(fieldError, "invalid_parameter") || !strings.Contains(fieldError, detail) {
			t.Errorf("since %q: beside the field %q, want %q", since, fieldError, detail)
		}
		if log != wholeLog || text != wholeText || typed != since {
			t.Errorf("since %q changed the page: log %q (want %q), text %q (want %q), the field %q", since, log, wholeLog, text, wholeText, typed)
		}
		if strings.Contains(main, `class="error"`) || strings.Contains(main, `id="preview"`) || strings.Contains(main, "No deliveries.") {
			t.Errorf("since %q: a banner, a count or an empty log on the page:\n%s", since, main)
		}
	}

	// The presets fill the field and count: the three drops of the last hour.
	var typed, preview string
	err := chromedp.Run(ctx, chromedp.Navigate(page), chromedp.Click(`//span[@id="since-presets"]/a[text()="1 h"]`, chromedp.BySearch),
		chromedp.WaitVisible(`#preview`, chromedp.ByQuery), chromedp.Text(`#preview`, &preview, chromedp.ByQuery),
		chromedp.Value(`input[name=recover_since]`, &typed, chromedp.ByQuery))
	if err != nil {
		t.Fatalf("the 1 h preset: %v", err)
	}
	at, perr := time.Parse("2006-01-02T15:04", typed)
	if perr != nil || time.Since(at) < 58*time.Minute || time.Since(at) > 61*time.Minute || !strings.Contains(preview, "This re-fires 3 dropped chains.") {
		t.Errorf("the 1 h preset: the field %q, the count %q", typed, preview)
	}
	var n int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#since-presets a').length`, &n)); err != nil || n != 4 {
		t.Fatalf("presets: %d (%v)", n, err)
	}
	for _, label := range []string{"6 h", "24 h", "7 d"} {
		var href string
		var okAttr bool
		if err := chromedp.Run(ctx, chromedp.AttributeValue(`//span[@id="since-presets"]/a[text()="`+label+`"]`, "href", &href, &okAttr, chromedp.BySearch)); err != nil || !okAttr ||
			!strings.Contains(href, "recover_since=") {
			t.Errorf("the %s preset: %q (%v)", label, href, err)
		}
	}
}
