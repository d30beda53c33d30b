package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"go.temporal.io/sdk/converter"

	"wds/internal/dev/temporaldev"
	"wds/internal/workspace"
	"wds/models"
	"wds/workflows/contract"
)

// chromiumPath is Debian's chromium, which make test installs when it is missing (tools/test-deps).
const chromiumPath = "/usr/bin/chromium"

// browser starts headless Chromium for one test and saves a screenshot of the page into the test's
// temporary directory if the test fails.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := exec.LookPath(chromiumPath); err != nil {
		t.Fatalf("the console's browser tests need Chromium: apt-get install chromium (%v)", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profileDir(t)), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		if t.Failed() {
			var png []byte
			if chromedp.Run(ctx, chromedp.FullScreenshot(&png, 80)) == nil {
				file := filepath.Join(t.TempDir(), "page.png")
				if os.WriteFile(file, png, 0o644) == nil {
					t.Logf("screenshot of the page at failure: %s", file)
				}
			}
		}
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	return ctx
}

// profileDir is a Chromium profile directory removed after the test. Chromium's helper processes may
// still be writing to it for a moment after the browser has exited, which t.TempDir's one-shot removal
// reports as a failure; this removal tries again until the directory is gone.
func profileDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wds-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for os.RemoveAll(dir) != nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	})
	return dir
}

// newestEndpoint is the endpoint the console created last.
func (h *harness) newestEndpoint() models.Endpoint {
	h.t.Helper()
	var ep models.Endpoint
	if err := h.db.Where("org_id = ?", h.org).Order("created_at DESC").Take(&ep).Error; err != nil {
		h.t.Fatal(err)
	}
	return ep
}

func (h *harness) signIn(ctx context.Context, token string) {
	h.t.Helper()
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/login"),
		chromedp.SendKeys(`input[name=token]`, token), chromedp.Submit(`input[name=token]`),
		chromedp.WaitVisible(`//h1[text()="Overview"]`)); err != nil {
		h.t.Fatalf("sign in: %v", err)
	}
}

// addEndpoint fills the webhooks page's form and returns the secret it shows once.
func (h *harness) addEndpoint(ctx context.Context, url, maxAttempts string) string {
	h.t.Helper()
	var secret string
	err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks"),
		chromedp.SendKeys(`input[name=url]`, url), chromedp.Click(`input[value="order.created"]`),
		chromedp.SendKeys(`input[name=max_attempts]`, maxAttempts), chromedp.Click(`//button[text()="Add endpoint"]`),
		chromedp.WaitVisible(`#secret`), chromedp.Text(`#secret`, &secret))
	if err != nil {
		h.t.Fatalf("add endpoint: %v", err)
	}
	return secret
}

// The console in a real browser: sign in, add an endpoint and see its secret once, Send test and
// see it succeed, watch an order's delivery drop, Re-fire it and see the new attempt arrive; a member
// sees no owner/admin buttons.
func TestTheConsoleInABrowser(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()
	ctx := browser(t)
	h.signIn(ctx, h.ownerToken)

	good := newReceiver(t, ok)
	secret := h.addEndpoint(ctx, good.srv.URL+"/hooks", "5")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q", secret)
	}
	var page string
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks"), chromedp.OuterHTML("html", &page)); err != nil || strings.Contains(page, secret) {
		t.Fatalf("the secret is shown again on the webhooks page (%v)", err)
	}
	// Send test, then the endpoint's log shows the test delivery succeeded.
	if err := chromedp.Run(ctx, chromedp.Click(`//button[text()="Send test"]`), chromedp.WaitVisible(`.notice`)); err != nil {
		t.Fatalf("send test: %v", err)
	}
	waitFor(t, 20*time.Second, "the test delivery", func() bool { return good.count() == 1 })
	if got := good.deliveries()[0]; got.eventType() != "webhook.test" {
		t.Fatalf("got %s", got.eventType())
	}
	ep := h.newestEndpoint()
	waitFor(t, 20*time.Second, "the test delivery logged", func() bool { return len(h.deliveries(ep.ID)) == 1 })
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks/"+ep.ID.String()),
		chromedp.WaitVisible(`//td[@class="st-succeeded"]`)); err != nil {
		t.Fatalf("the delivery log: %v", err)
	}

	// A receiver that refuses, saying why, until told otherwise; two attempts per chain.
	var healthy atomic.Bool
	flaky := newReceiverSaying(t, func(int) int {
		if healthy.Load() {
			return http.StatusOK
		}
		return http.StatusUnauthorized
	}, "bad signature")
	h.addEndpoint(ctx, flaky.srv.URL+"/hooks", "2")
	failing := h.newestEndpoint()
	if status, out := h.order("console-1"); status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, out)
	}
	waitFor(t, 30*time.Second, "the delivery dropped", func() bool {
		rows := h.deliveries(failing.ID)
		return len(rows) == 2 && rows[1].Status == "dropped"
	})
	h.checkOutcomeInTemporal(failing.ID)
	h.checkDeliveryLog(ctx, failing, h.deliveries(failing.ID))
	healthy.Store(true)
	before := flaky.count()
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks/"+failing.ID.String()),
		chromedp.WaitVisible(`//td[@class="st-dropped"]`), chromedp.Click(`//button[text()="Re-fire"]`),
		chromedp.WaitVisible(`.notice`)); err != nil {
		t.Fatalf("re-fire: %v", err)
	}
	waitFor(t, 30*time.Second, "the re-fired attempt at the receiver", func() bool { return flaky.count() == before+1 })
	h.checkRefiredRow(ctx, failing.ID, h.deliveries(failing.ID)[1])

	// Ship the order, then report it delivered, on its page.
	var orderID string
	h.db.Raw(`SELECT id::text FROM orders WHERE external_id = 'console-1'`).Find(&orderID)
	if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/orders/"+orderID),
		chromedp.SendKeys(`input[name=carrier]`, "UPS"), chromedp.Click(`//button[text()="Ship"]`),
		chromedp.WaitVisible(`//b[@id="fulfillment" and text()="shipped"]`),
		chromedp.Click(`//button[text()="Mark delivered"]`),
		chromedp.WaitVisible(`//b[@id="fulfillment" and text()="delivered"]`)); err != nil {
		t.Fatalf("ship and deliver: %v", err)
	}

	// A member: no create, revoke or manage buttons anywhere.
	_, memberToken, err := workspace.NewService(h.db).CreateUser(h.ctx, h.org, "member@acme.test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	member := browser(t)
	h.signIn(member, memberToken)
	for _, p := range []string{"/console/keys", "/console/connectors", "/console/webhooks", "/console/webhooks/" + failing.ID.String()} {
		var html string
		if err := chromedp.Run(member, chromedp.Navigate(h.api.URL+p), chromedp.OuterHTML("main", &html)); err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{"Create key", "Create connector key", "Add endpoint", ">Revoke<", ">Disable<", ">Delete<", "Rotate secret", "Re-fire"} {
			if strings.Contains(html, b) {
				t.Errorf("a member sees %q on %s", b, p)
			}
		}
	}
}

// checkOutcomeInTemporal reads the order's event workflow as the Temporal UI shows it: its summary
// names the type and how many endpoints; it is Failed, with a failure naming the dropped endpoint and
// carrying per chain how it ended; and the workflow list's filters on status find it.
func (h *harness) checkOutcomeInTemporal(dropped uuid.UUID) {
	h.t.Helper()
	ev := h.events("order.created")
	id := contract.EventWorkflowID(ev[len(ev)-1].ID)
	err := h.temporal.GetWorkflow(h.ctx, id, "").Get(h.ctx, nil)
	res, ok := contract.DroppedResult(err)
	if !ok || !strings.Contains(err.Error(), dropped.String()) {
		h.t.Fatalf("the workflow of a dropped chain ended with %v", err)
	}
	for _, q := range []string{"ExecutionStatus = 'Failed'", "WdsDeliveryStatus = 'partially_dropped'"} {
		query := fmt.Sprintf("WorkflowId = '%s' AND %s", id, q)
		waitFor(h.t, 10*time.Second, "the workflow list to show "+q, func() bool { return h.workflowsWith(query) == 1 })
	}
	outcomes := map[uuid.UUID]models.Status{}
	for _, c := range res.Chains {
		outcomes[c.EndpointID] = c.Outcome
	}
	if res.Status != contract.WorkflowPartiallyDropped || len(res.Chains) != 2 || outcomes[dropped] != models.StatusDropped {
		h.t.Fatalf("workflow result %+v", res)
	}
	desc, err := h.temporal.DescribeWorkflowExecution(h.ctx, id, "")
	if err != nil {
		h.t.Fatal(err)
	}
	var summary string
	if p := desc.GetExecutionConfig().GetUserMetadata().GetSummary(); p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &summary)
	}
	if summary != "order.created → 2 endpoints" {
		h.t.Fatalf("workflow summary %q", summary)
	}
}

// checkDeliveryLog reads a dropped chain's two attempts on the endpoint's page: a header that names
// the endpoint and leads back, and per attempt the response status once, the receiver's excerpt, the
// event linking to its page, a real duration and, on the failed attempt, when the next one is due.
func (h *harness) checkDeliveryLog(ctx context.Context, ep models.Endpoint, rows []models.Delivery) {
	h.t.Helper()
	var id, events, enabled, back, eventHref string
	failed := "#delivery-" + rows[0].ID.String()
	cell := func(row, class string) string {
		var text string
		if err := chromedp.Run(ctx, chromedp.Text(row+" td."+class, &text, chromedp.ByQuery)); err != nil {
			h.t.Fatalf("%s %s: %v", row, class, err)
		}
		return strings.TrimSpace(text)
	}
	var ok bool
	err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks/"+ep.ID.String()),
		chromedp.WaitVisible(failed, chromedp.ByQuery),
		chromedp.Text(`#endpoint-id`, &id, chromedp.ByQuery), chromedp.Text(`#endpoint-events`, &events, chromedp.ByQuery),
		chromedp.Text(`#endpoint-enabled`, &enabled, chromedp.ByQuery), chromedp.AttributeValue(`#back`, "href", &back, nil, chromedp.ByQuery),
		chromedp.AttributeValue(failed+" a.event", "href", &eventHref, &ok, chromedp.ByQuery))
	if err != nil {
		h.t.Fatalf("the delivery log: %v", err)
	}
	if id != ep.ID.String() || events != "order.created" || enabled != "yes" || back != "/console/webhooks" {
		h.t.Fatalf("endpoint header: id %q, events %q, enabled %q, back %q", id, events, enabled, back)
	}
	if eventHref != "/console/events/"+rows[0].EventID.String() {
		h.t.Fatalf("the event links to %q", eventHref)
	}
	for i, row := range []string{failed, "#delivery-" + rows[1].ID.String()} {
		if got := cell(row, "answer"); got != "401 Unauthorized" {
			h.t.Errorf("attempt %d answer %q, want the status once", i+1, got)
		}
		if got := cell(row, "excerpt"); got != "bad signature" {
			h.t.Errorf("attempt %d excerpt %q", i+1, got)
		}
		if got := cell(row, "reason"); got != "" {
			h.t.Errorf("attempt %d repeats the status as its error: %q", i+1, got)
		}
		if got, want := cell(row, "took"), fmt.Sprintf("%d ms", rows[i].DurationMS); got != want && !(rows[i].DurationMS == 0 && got == "<1 ms") {
			h.t.Errorf("attempt %d took %q, want %q", i+1, got, want)
		}
	}
	if got := cell(failed, "next"); rows[0].NextAttemptAt == nil || got != rows[0].NextAttemptAt.UTC().Format("2006-01-02 15:04:05")+" UTC" {
		h.t.Errorf("the failed attempt's next attempt reads %q, logged %v", got, rows[0].NextAttemptAt)
	}
	if got := cell("#delivery-"+rows[1].ID.String(), "next"); got != "" {
		h.t.Errorf("the dropped attempt has a next attempt %q", got)
	}
	if err := chromedp.Run(ctx, chromedp.Click(failed+" a.event", chromedp.ByQuery),
		chromedp.WaitVisible(`//h1[starts-with(text(), "order.created")]`)); err != nil {
		h.t.Fatalf("the event link: %v", err)
	}
}

// checkRefiredRow reads the re-fired row again: it says "re-fired" and links to its new chain's
// workflow, and offers no second Re-fire.
func (h *harness) checkRefiredRow(ctx context.Context, endpointID uuid.UUID, dropped models.Delivery) {
	h.t.Helper()
	var refire []models.Dispatch
	if err := h.db.Where("refired_delivery_id = ?", dropped.ID).Find(&refire).Error; err != nil || len(refire) != 1 {
		h.t.Fatalf("the re-fire's dispatch: %v, %d rows", err, len(refire))
	}
	row := "#delivery-" + dropped.ID.String()
	var href, html string
	err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+"/console/webhooks/"+endpointID.String()),
		chromedp.WaitVisible(row+" .refired", chromedp.ByQuery),
		chromedp.AttributeValue(row+" a.new-chain", "href", &href, nil, chromedp.ByQuery),
		chromedp.OuterHTML(row, &html, chromedp.ByQuery))
	if err != nil {
		h.t.Fatalf("the re-fired row: %v", err)
	}
	if !strings.HasSuffix(href, "/workflows/"+url.PathEscape(refire[0].WorkflowID)) {
		h.t.Fatalf("the new chain links to %q, want workflow %s", href, refire[0].WorkflowID)
	}
	if strings.Contains(html, "Re-fire</button>") {
		h.t.Fatal("a re-fired row still offers Re-fire")
	}
}
