package console_test

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/api/console"
)

// A refusal under /console/ is an HTML page with the API's code, its detail and a way back, never
// plain text or JSON, whether or not the browser is signed in; outside /console/ the APIs keep
// their JSON 404.
func TestConsoleRefusalsArePagesWithAWayBack(t *testing.T) {
	e := newEnv(t)
	signedIn, csrf := e.signIn(e.ownerToken)
	crossSite := func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }
	for _, c := range []struct {
		name, method, path string
		client             *http.Client
		form               url.Values
		header             func(*http.Request)
		status             int
		code               string
	}{
		{"a stale CSRF token", "POST", "/console/keys", signedIn, url.Values{"csrf": {"00"}, "name": {"x"}}, nil, http.StatusForbidden, "forbidden"},
		{"a cross-site post", "POST", "/console/keys", signedIn, url.Values{"csrf": {csrf}}, crossSite, http.StatusForbidden, "forbidden"},
		{"an unknown endpoint action", "POST", "/console/webhooks/" + uuid.NewString() + "/explode", signedIn, url.Values{"csrf": {csrf}}, nil, http.StatusNotFound, ""},
		{"a missing order", "GET", "/console/orders/" + uuid.NewString(), signedIn, nil, nil, http.StatusNotFound, "not_found"},
		{"an order id that is no id", "GET", "/console/orders/nope", signedIn, nil, nil, http.StatusNotFound, "not_found"},
		{"an unknown page, signed out", "GET", "/console/nowhere", e.browser(), nil, nil, http.StatusNotFound, ""},
		{"a stale sign-in form", "POST", "/console/login", e.browser(), url.Values{"csrf": {"00"}, "token": {"x"}}, nil, http.StatusForbidden, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.rows()
			var body *strings.Reader
			if c.form != nil {
				body = strings.NewReader(c.form.Encode())
			} else {
				body = strings.NewReader("")
			}
			req, _ := http.NewRequest(c.method, e.srv.URL+c.path, body)
			if c.form != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if c.header != nil {
				c.header(req)
			}
			res, err := c.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			page := string(raw)
			if res.StatusCode != c.status || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("%d %s:\n%.300s", res.StatusCode, res.Header.Get("Content-Type"), page)
			}
			if !strings.Contains(page, `<a href="/console/">`) || !strings.Contains(page, "<h1>") || !strings.Contains(page, "console.css") {
				t.Errorf("no styled page with a way back:\n%s", page)
			}
			if c.code != "" && !strings.Contains(page, "<code>"+c.code+"</code>") {
				t.Errorf("the page does not give the code %s:\n%s", c.code, page)
			}
			if after := e.rows(); after != before {
				t.Errorf("a refused request changed rows: %s -> %s", before, after)
			}
		})
	}
	if res, body := e.do(e.browser(), "GET", "/v1/nowhere", nil); res.StatusCode != http.StatusNotFound || !strings.Contains(body, `"error"`) {
		t.Errorf("outside the console: %d %s", res.StatusCode, body)
	}
}

// The webhooks page states the retry ladder the process was configured with, not a fixed text.
func TestTheWebhooksPageShowsTheConfiguredLadder(t *testing.T) {
	for _, c := range []struct {
		schedule []time.Duration
		want     string
	}{
		{[]time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 8 * time.Hour}, "+1m, +5m, +30m, +2h, +8h"},
		{[]time.Duration{10 * time.Second, 90 * time.Second, 90 * time.Minute}, "+10s, +1m30s, +1h30m"},
	} {
		e := newEnv(t, func(con *console.Console) { con.RetrySchedule = c.schedule })
		b, _ := e.signIn(e.ownerToken)
		if _, page := e.do(b, "GET", "/console/webhooks", nil); !strings.Contains(html.UnescapeString(page), `<b id="ladder">`+c.want+`</b>`) {
			t.Errorf("want the ladder %s on:\n%s", c.want, page)
		}
	}
}
