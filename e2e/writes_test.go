package e2e

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"wds/delivery"
	"wds/temporaldev"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// consoleBrowser is a cookie-keeping HTTP client signed in to the console, with the session's CSRF
// token, as a browser without JavaScript has them.
type consoleBrowser struct {
	h    *harness
	c    *http.Client
	csrf string
}

// signInToConsole posts the operator token to the login form (with whatever the form carries) and
// reads the session's CSRF token from a page.
func (h *harness) signInToConsole(token string) *consoleBrowser {
	h.t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &consoleBrowser{h: h, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
	form := url.Values{"token": {token}}
	if m := csrfField.FindStringSubmatch(b.get("/console/login")); m != nil {
		form.Set("csrf", m[1])
	}
	if res, page := b.post("/console/login", form); res.StatusCode != http.StatusSeeOther {
		h.t.Fatalf("sign in: %d\n%s", res.StatusCode, page)
	}
	m := csrfField.FindStringSubmatch(b.get("/console/orders"))
	if m == nil {
		h.t.Fatal("no CSRF token on the orders page")
	}
	b.csrf = m[1]
	return b
}

func (b *consoleBrowser) get(path string) string {
	b.h.t.Helper()
	res, err := b.c.Get(b.h.api.URL + path)
	if err != nil {
		b.h.t.Fatal(err)
	}
	defer res.Body.Close()
	page, _ := io.ReadAll(res.Body)
	return string(page)
}

func (b *consoleBrowser) post(path string, form url.Values) (*http.Response, string) {
	b.h.t.Helper()
	res, err := b.c.Post(b.h.api.URL+path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		b.h.t.Fatal(err)
	}
	defer res.Body.Close()
	page, _ := io.ReadAll(res.Body)
	return res, string(page)
}

// orderID creates an order over the Integration API and returns its id.
func (h *harness) orderID(externalID string) string {
	h.t.Helper()
	status, out := h.order(externalID)
	if status != http.StatusCreated {
		h.t.Fatalf("create order %s: %d %v", externalID, status, out)
	}
	return out["id"].(string)
}

// arrivesAtOnce waits for the receiver's n-th delivery, of typ, and fails unless it came before the
// relay could have taken the event: the relay leaves an event alone for its grace after the write
// committed, so only the write's own after-commit start delivers it sooner. On an idle dev stack it
// arrives in about 100 ms (logged); the bound is the grace, not a speed, so a loaded machine does not
// make the test fail.
func arrivesAtOnce(t *testing.T, rc *receiver, n int, typ string, start time.Time) {
	t.Helper()
	waitFor(t, delivery.RelayGrace+10*time.Second, typ+" at the receiver", func() bool { return rc.count() >= n })
	got := rc.deliveries()[n-1]
	if got.eventType() != typ {
		t.Fatalf("delivery %d is %s, want %s", n, got.eventType(), typ)
	}
	latency := got.at.Sub(start)
	t.Logf("%s reached the receiver %v after the write", typ, latency.Round(time.Millisecond))
	if latency >= delivery.RelayGrace {
		t.Fatalf("%s took %v, not less than the relay's grace (%v): the write left it to the relay", typ, latency, delivery.RelayGrace)
	}
}

// A write's webhook leaves as soon as the write commits, whichever adapter made it: a console Ship
// is as fast as the Operator API's, though the relay waits its grace (5 s, as in wds) before taking
// either event.
func TestConsoleAndOperatorWritesStartTheirEventsAtOnce(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.starter.Grace = delivery.RelayGrace // as in wds; set before the worker's relay reads it
	h.startWorker()
	rc := newReceiver(t, ok)
	ep := h.endpoint(rc, 5, "order.shipped")
	viaConsole, viaAPI := h.orderID("ship-console"), h.orderID("ship-api")

	b := h.signInToConsole(h.ownerToken)
	start := time.Now()
	res, page := b.post("/console/orders/"+viaConsole+"/ship", url.Values{"csrf": {b.csrf}, "carrier": {"UPS"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("console ship: %d\n%s", res.StatusCode, page)
	}
	arrivesAtOnce(t, rc, 1, "order.shipped", start)
	verify(t, rc.deliveries()[0], ep.secret)

	start = time.Now()
	status, out := h.call("/admin/v1/orders/"+viaAPI+"/shipments", h.ownerToken, map[string]any{"carrier": "DHL"})
	if status != http.StatusCreated {
		t.Fatalf("operator API ship: %d %v", status, out)
	}
	arrivesAtOnce(t, rc, 2, "order.shipped", start)
}
