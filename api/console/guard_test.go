package console_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
)

// endless is a body of n bytes that costs the sender no memory.
type endless struct{ left int64 }

func (r *endless) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), r.left)
	for i := range p[:n] {
		p[i] = 'a'
	}
	r.left -= n
	return int(n), nil
}

// allocated is the bytes the whole process has allocated so far.
func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// A body over 1 MiB is refused with 413 payload_too_large, read no further: declared (Content-Length)
// or streamed (chunked), with a session or on the sign-in form that needs none; a multipart body is
// refused unread. The server allocates far less than the body while refusing it.
func TestConsoleBodiesAreCappedAt1MiB(t *testing.T) {
	e := newEnv(t)
	const size = 10 << 20
	multipartBody := func() (io.Reader, string) {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			f, _ := mw.CreateFormFile("token", "t.txt")
			_, _ = io.Copy(f, &endless{left: size})
			_ = mw.Close()
			_ = pw.Close()
		}()
		return pr, mw.FormDataContentType()
	}
	for _, c := range []struct {
		name    string
		chunked bool
		multi   bool
		status  int
		code    string
	}{
		{"form with Content-Length", false, false, http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"chunked form", true, false, http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"multipart with Content-Length", false, true, http.StatusRequestEntityTooLarge, "payload_too_large"},
		// No console form is multipart: refused before a byte of it is read.
		{"chunked multipart", true, true, http.StatusBadRequest, "invalid_parameter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader = &endless{left: size}
			ct := "application/x-www-form-urlencoded"
			if c.multi {
				body, ct = multipartBody()
			}
			req, _ := http.NewRequest("POST", e.srv.URL+"/console/login", body)
			req.Header.Set("Content-Type", ct)
			if !c.chunked {
				req.ContentLength = size
			}
			before := allocated()
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.status || !strings.Contains(string(page), c.code) {
				t.Fatalf("%d %s", res.StatusCode, page)
			}
			if grew := allocated() - before; grew > size*6/10 { // the cap, read once, with room for the rest of the process
				t.Fatalf("refusing a %d-byte body allocated %d bytes", size, grew)
			}
		})
	}
	// A signed-in page's POST is capped too, and a body under the cap still works.
	b, csrf := e.signIn(e.ownerToken)
	before := e.rows()
	big := url.Values{"csrf": {csrf}, "name": {strings.Repeat("x", maxBodyForTest)}, "scope": {"read_only"}}
	if res, page := e.do(b, "POST", "/console/keys", big); res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 1 MiB key name: %d %.200s", res.StatusCode, page)
	}
	if after := e.rows(); after != before {
		t.Fatalf("a refused body changed rows: %s -> %s", before, after)
	}
	if res, _ := e.do(b, "POST", "/console/keys", url.Values{"csrf": {csrf}, "name": {"ci"}, "scope": {"read_only"}}); res.StatusCode != http.StatusOK {
		t.Fatalf("a small form after the refusal: %d", res.StatusCode)
	}
}

const maxBodyForTest = 1 << 20

// Every console answer (page, redirect, refusal, stylesheet) carries the security headers.
func TestEveryConsoleAnswerCarriesTheSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	b, _ := e.signIn(e.ownerToken)
	anon := e.browser()
	for _, c := range []struct {
		client *http.Client
		method string
		path   string
	}{
		{anon, "GET", "/console/login"}, {anon, "GET", "/console/"}, {anon, "GET", "/console/console.css"}, {anon, "GET", "/console/console.js"},
		{anon, "POST", "/console/keys"}, {b, "GET", "/console/webhooks"}, {b, "POST", "/console/keys"},
	} {
		res, _ := e.do(c.client, c.method, c.path, url.Values{})
		h := res.Header
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "form-action 'self'") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s %s (%d): headers %v", c.method, c.path, res.StatusCode, h)
		}
	}
}

// A POST the browser says comes from another site is 403 and changes nothing, even with the right
// CSRF token (the sign-in form included); the console's own pages still post.
func TestACrossSitePostIsRefused(t *testing.T) {
	e := newEnv(t)
	b, csrf := e.signIn(e.ownerToken)
	before := e.rows()
	for _, h := range []map[string]string{
		{"Origin": "https://evil.test"},
		{"Origin": "null"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site", "Origin": "https://console.evil.test"},
		{"Sec-Fetch-Site": "cross-site", "Origin": e.srv.URL},
	} {
		for _, path := range []string{"/console/keys", "/console/login"} {
			form := url.Values{"csrf": {csrf}, "name": {"x"}, "scope": {"read_only"}, "token": {e.ownerToken}}
			req, _ := http.NewRequest("POST", e.srv.URL+path, bytes.NewBufferString(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range h {
				req.Header.Set(k, v)
			}
			res, err := b.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with %v: %d, want 403", path, h, res.StatusCode)
			}
		}
	}
	if after := e.rows(); after != before {
		t.Fatalf("cross-site posts changed rows: %s -> %s", before, after)
	}
	if n := e.sessionsOf(e.userOf(e.ownerToken)); n != 1 {
		t.Fatalf("cross-site sign-ins opened sessions: %d, want the test's one", n)
	}
	form := url.Values{"csrf": {csrf}, "name": {"x"}, "scope": {"read_only"}}
	req, _ := http.NewRequest("POST", e.srv.URL+"/console/keys", bytes.NewBufferString(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a same-origin POST: %d", res.StatusCode)
	}
}

// The sign-in form is protected against login CSRF like every other form: a sign-in without the
// form's token, with a token of another browser's form, or without the pre-session cookie the token
// is bound to, is 403 and opens no session, even with a valid operator token.
func TestASignInNeedsItsFormsToken(t *testing.T) {
	e := newEnv(t)
	owner := e.userOf(e.ownerToken)
	_, theirs := e.loginForm()
	mine, form := e.loginForm()
	for _, c := range []struct {
		name   string
		client *http.Client
		csrf   string
	}{
		{"no token", mine, ""},
		{"a made-up token", mine, strings.Repeat("0", 64)},
		{"another browser's form", mine, theirs.Get("csrf")},
		{"no pre-session cookie", e.browser(), form.Get("csrf")},
	} {
		res, page := e.do(c.client, "POST", "/console/login", url.Values{"token": {e.ownerToken}, "csrf": {c.csrf}})
		if res.StatusCode != http.StatusForbidden || !strings.Contains(page, "forbidden") {
			t.Errorf("%s: %d %.200s", c.name, res.StatusCode, page)
		}
	}
	if n := e.sessionsOf(owner); n != 0 {
		t.Fatalf("refused sign-ins opened %d sessions", n)
	}
	// The form's own token signs in; the pre-session cookie is Secure, so __Host- named, and ends.
	form.Set("token", e.ownerToken)
	res, _ := e.do(mine, "POST", "/console/login", form)
	if res.StatusCode != http.StatusSeeOther || e.sessionsOf(owner) != 1 {
		t.Fatalf("the form's own token: %d", res.StatusCode)
	}
	ended := false
	for _, ck := range res.Cookies() {
		ended = ended || ck.Name == "__Host-wds_console_login" && ck.MaxAge < 0 && ck.Secure && ck.Path == "/"
	}
	if !ended {
		t.Fatalf("the pre-session cookie did not end: %v", res.Cookies())
	}
}

// An unknown console path answers an HTML 404 page with the security headers; other unknown paths
// keep the APIs' JSON 404.
func TestUnknownConsolePathsAnswerAnHTMLPage(t *testing.T) {
	e := newEnv(t)
	b, _ := e.signIn(e.ownerToken)
	for _, c := range []struct {
		client *http.Client
		method string
		path   string
	}{{e.browser(), "GET", "/console/nope"}, {b, "GET", "/console/keys/x/y"}, {b, "POST", "/console/nope"}, {e.browser(), "GET", "/console/%2e%2e/v1/x"}} {
		res, page := e.do(c.client, c.method, c.path, nil)
		if res.StatusCode != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(page, "Not found") || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: %d %s %.200s", c.method, c.path, res.StatusCode, res.Header.Get("Content-Type"), page)
		}
	}
	res, page := e.do(e.browser(), "GET", "/v1/nope", nil)
	if res.StatusCode != http.StatusNotFound || page != `{"error":"not_found","detail":"no such path"}` {
		t.Fatalf("an unknown API path: %d %s", res.StatusCode, page)
	}
}
