package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"wds/internal/dev/temporaldev"
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

// arrival waits for the receiver's n-th delivery, of typ, and returns how long after start it came.
// It fails unless it came before the relay could have taken the event: the relay leaves an event
// alone for its grace after the write committed, so only the write's own after-commit start delivers
// it sooner.
func arrival(t *testing.T, rc *receiver, n int, typ string, start time.Time, grace time.Duration) time.Duration {
	t.Helper()
	waitFor(t, grace+10*time.Second, typ+" at the receiver", func() bool { return rc.count() >= n })
	got := rc.deliveries()[n-1]
	if got.eventType() != typ {
		t.Fatalf("delivery %d is %s, want %s", n, got.eventType(), typ)
	}
	latency := got.at.Sub(start)
	if latency >= grace {
		t.Fatalf("%s took %v, not less than the relay's grace (%v): the write left it to the relay", typ, latency, grace)
	}
	return latency
}

// median is the middle of an odd number of durations.
func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// A write's webhook leaves as soon as the write commits, whichever adapter made it: a console Ship
// reaches the receiver within 1 s, like the Operator API's. The relay's grace is a minute here, so
// only the write's own start can deliver in time. Each adapter ships three orders and the bound holds
// for the median, so one slow round on a loaded machine does not fail the test while a write that
// leaves its event to the relay always does.
func TestConsoleAndOperatorWritesStartTheirEventsAtOnce(t *testing.T) {
	const rounds, bound, grace = 3, time.Second, time.Minute
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.starter.Grace = grace // set before the worker's relay reads it
	h.startWorker()
	rc := newReceiver(t, ok)
	ep := h.endpoint(rc, 5, "order.shipped")
	b := h.signInToConsole(h.ownerToken)

	var viaConsole, viaAPI []time.Duration
	for i := range rounds {
		id := h.orderID(fmt.Sprintf("ship-console-%d", i))
		start := time.Now()
		res, page := b.post("/console/orders/"+id+"/ship", url.Values{"csrf": {b.csrf}, "carrier": {"UPS"}})
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("console ship: %d\n%s", res.StatusCode, page)
		}
		viaConsole = append(viaConsole, arrival(t, rc, 2*i+1, "order.shipped", start, grace))
		verify(t, rc.deliveries()[2*i], ep.secret)

		id = h.orderID(fmt.Sprintf("ship-api-%d", i))
		start = time.Now()
		status, out := h.call("/admin/v1/orders/"+id+"/shipments", h.ownerToken, map[string]any{"carrier": "DHL"})
		if status != http.StatusCreated {
			t.Fatalf("operator API ship: %d %v", status, out)
		}
		viaAPI = append(viaAPI, arrival(t, rc, 2*i+2, "order.shipped", start, grace))
	}
	t.Logf("order.shipped at the receiver after the write: console %v, Operator API %v", viaConsole, viaAPI)
	for name, d := range map[string][]time.Duration{"console": viaConsole, "Operator API": viaAPI} {
		if m := median(d); m >= bound {
			t.Errorf("%s ship: median %v to the receiver, want under %v", name, m, bound)
		}
	}
}
