package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	stdlog "log"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"wds/api/signing"
	"wds/internal/platform/database"
	"wds/internal/platform/secrets"
	"wds/models"
	"wds/test/pgtest"
)

// secretShaped finds every secret the service hands out in an answer: keys, tokens, signing secrets
// (standard padded base64, whose '+' an HTML page shows as &#43;, or the older base64url).
var secretShaped = regexp.MustCompile(`(?:pck_live_|pck_int_|vct_|wds_op_)[A-Za-z0-9_-]{43}|whsec_(?:[A-Za-z0-9/]|\+|&#43;){43}=|whsec_[A-Za-z0-9_-]{43}`)

// secretPrefixes are the prefixes of the service's secrets.
var secretPrefixes = []string{"pck_live_", "pck_int_", "whsec_", "vct_", "wds_op_"}

// secretForms are the ways a secret could show up in text: itself, URL-escaped, hex (a bytea column
// as text), its prefix with the next 12 characters (more than a hint shows), and base64 in any
// alignment, standard or URL alphabet (fragments that do not depend on where in an encoded string
// the secret sat, as in a Basic authorization header).
func secretForms(s string) []string {
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s), hex.EncodeToString([]byte(s))}
	prefix := ""
	for _, p := range secretPrefixes {
		if strings.HasPrefix(s, p) {
			prefix = p
		}
	}
	if len(s) >= len(prefix)+12 {
		forms = append(forms, s[:len(prefix)+12])
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for pad := 0; pad < 3; pad++ {
			b64 := enc.EncodeToString(append(make([]byte, pad), s...))
			forms = append(forms, b64[4:20]) // bytes 3-pad.. of s, whatever preceded it
		}
	}
	slices.Sort(forms)
	return slices.Compact(forms)
}

// TestSecretsSweep creates and uses every kind of secret through the real router, the console
// included, with refusals that carry a secret (wrong scope, bad signature, revoked key, a rotated
// token, a failed sign-in, a server error mid-request), captures every log line of the run at the
// most verbose level, and then looks for each secret, in every form it could take, in the log, in
// the audit log and in every row of every table.
func TestSecretsSweep(t *testing.T) {
	ctx := context.Background()
	logs := &syncBuffer{}
	log := logrus.New()
	log.SetOutput(logs)
	log.SetFormatter(&logrus.JSONFormatter{})
	log.SetLevel(logrus.TraceLevel) // debug and below: every line a misconfigured production level could add
	// Whatever writes to the standard loggers lands in the same buffer.
	std := logrus.StandardLogger()
	stdOut, stdLevel, stdFormatter := std.Out, std.GetLevel(), std.Formatter
	std.SetOutput(logs)
	std.SetLevel(logrus.TraceLevel)
	std.SetFormatter(&logrus.JSONFormatter{})
	stdlog.SetOutput(logs)
	t.Cleanup(func() {
		std.SetOutput(stdOut)
		std.SetLevel(stdLevel)
		std.SetFormatter(stdFormatter)
		stdlog.SetOutput(os.Stderr)
	})
	// The pool logs through the same logger, as `wds serve` opens it: failed and slow statements.
	db, err := database.Open(ctx, pgtest.URL(t), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	e := newSweepEnv(t, db, log)

	var mu sync.Mutex
	known := map[string]string{} // secret -> what it is
	keep := func(what string, ss ...string) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range ss {
			if s == "" {
				t.Fatalf("%s: an empty secret", what)
			}
			if known[s] == "" {
				known[s] = what
			}
		}
	}
	e.onAnswer = func(a answer) {
		for _, s := range secretShaped.FindAllString(string(a.body), -1) {
			keep("shown in an answer", html.UnescapeString(s))
		}
	}
	x := e.tenant("acme") // keys of both kinds, an order, a claim token, two endpoints, a console session
	keep("tenant", x.secrets...)
	orgPath := "/admin/v1/orgs/" + x.org.String()
	want := func(a answer, status int, what string) answer {
		t.Helper()
		if a.status != status {
			t.Fatalf("%s: %d, want %d: %.300s", what, a.status, status, a.body)
		}
		return a
	}
	made := func(prefix string) string {
		s, _, err := secrets.NewAPIKey(prefix)
		if err != nil {
			t.Fatal(err)
		}
		keep("made up by a caller", s)
		return s
	}

	// Read keys: used, misused (in the query string, as Basic credentials, mistyped, without the
	// scope), revoked and used again.
	ro := want(e.send(nil, "POST", orgPath+"/read-keys", x.owner, map[string]any{"scope": "read_only", "name": "ro"}, nil), 201, "read key")
	roKey, roID := ro.str(t, "key"), ro.str(t, "id")
	want(e.send(nil, "GET", "/v1/orders", roKey, nil, nil), 200, "read")
	want(e.send(nil, "GET", "/v1/orders?api_key="+url.QueryEscape(x.readKey), x.readKey, nil, nil), 200, "key in the query too")
	want(e.send(nil, "GET", "/v1/orders", "", nil, map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(x.readKey+":"))}), 401, "Basic")
	last := "A"
	if strings.HasSuffix(x.readKey, last) {
		last = "B"
	}
	mistyped := x.readKey[:len(x.readKey)-1] + last // one character off: a near miss is as secret
	keep("mistyped read key", mistyped)
	want(e.send(nil, "GET", "/v1/orders", mistyped, nil, nil), 401, "mistyped key")
	want(e.send(nil, "GET", "/v1/orders", made("pck_live_"), nil, nil), 401, "unknown key")
	want(e.send(nil, "POST", "/v1/webhooks/test/"+x.endpointID.String(), roKey, nil, nil), 403, "read_only key on the test event")
	want(e.send(nil, "POST", "/v1/webhooks/test/"+x.endpointID.String(), x.readKey, nil, nil), 200, "test event")
	want(e.send(nil, "POST", "/admin/v1/read-keys/"+roID+"/revoke", x.owner, nil, nil), 200, "revoke read key")
	want(e.send(nil, "GET", "/v1/orders", roKey, nil, nil), 401, "revoked read key")

	// Integration keys with signing secrets: signed, replayed, badly signed, signed with the
	// secret pasted where the signature goes, expired, unsigned, without the scope, failing on the
	// server, revoked; and the store platform's signed receiver.
	sk := want(e.send(nil, "POST", orgPath+"/integration-keys", x.owner, map[string]any{"store_id": x.store,
		"scopes": models.IntegrationScopes, "require_signature": true, "label": "signed"}, nil), 201, "signed key")
	signedKey, signingSecret, signedID := sk.str(t, "key"), sk.str(t, "signing_secret"), sk.str(t, "id")
	order := func(ext string) string {
		return `{"external_id":"` + ext + `","client":{"external_id":"c-` + ext + `","email":"` + ext + `@example.test"},` +
			`"lines":[{"description":"Mug","quantity":1,"unit_price_cents":1250}],"payment":{"amount_cents":1250,"method":"card"}}`
	}
	sign := func(secret, body string, at time.Time) map[string]string {
		return map[string]string{"PC-Signature": signing.SignPC([]byte(secret), at.Unix(), []byte(body))}
	}
	body := order("signed-1")
	hdr := sign(signingSecret, body, time.Now())
	hdr["Idempotency-Key"] = "sweep-1"
	want(e.send(nil, "POST", "/integrations/v1/orders", signedKey, body, hdr), 201, "signed order")
	want(e.send(nil, "POST", "/integrations/v1/orders", signedKey, body, hdr), 201, "replayed order")
	want(e.send(nil, "POST", "/integrations/v1/orders", signedKey, body, sign(made("whsec_"), body, time.Now())), 401, "bad signature")
	want(e.send(nil, "POST", "/integrations/v1/orders", signedKey, body, map[string]string{"PC-Signature": signingSecret}), 401, "secret as signature")
	want(e.send(nil, "POST", "/integrations/v1/orders", signedKey, body, map[string]string{"PC-Signature": "t=1,v1=" + signingSecret}), 401, "secret as v1")
	want(e.send(nil, "POST", "/integrations/v1/orders", signedKey, body, sign(signingSecret, body, time.Now().Add(-time.Hour))), 401, "expired signature")
	want(e.send(nil, "POST", "/integrations/v1/orders", signedKey, body, nil), 401, "unsigned")
	narrow := want(e.send(nil, "POST", orgPath+"/integration-keys", x.owner, map[string]any{"store_id": x.store,
		"scopes": []string{"clients:write"}}, nil), 201, "narrow key").str(t, "key")
	want(e.send(nil, "POST", "/integrations/v1/orders", narrow, order("narrow"), nil), 403, "without the scope")
	want(e.send(nil, "POST", "/integrations/v1/orders", made("pck_int_"), order("unknown"), nil), 401, "unknown integration key")
	// A server error in the middle of a signed request: its cause is logged at error level.
	if err := db.Exec(`CREATE FUNCTION sweep_fail() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'forced failure'; END; $$`).Error; err != nil {
		t.Fatal(err)
	}
	db.Exec(`CREATE TRIGGER sweep_fail BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION sweep_fail()`)
	failing := order("fails")
	want(e.send(nil, "POST", "/integrations/v1/orders", signedKey, failing, sign(signingSecret, failing, time.Now())), 500, "server error")
	db.Exec(`DROP TRIGGER sweep_fail ON events`)
	want(e.send(nil, "POST", "/admin/v1/integration-keys/"+signedID+"/revoke", x.owner, nil, nil), 200, "revoke integration key")
	body = order("signed-2")
	want(e.send(nil, "POST", "/integrations/v1/orders", signedKey, body, sign(signingSecret, body, time.Now())), 401, "revoked integration key")

	nk := want(e.send(nil, "POST", orgPath+"/integration-keys", x.owner, map[string]any{"store_id": x.store, "format": "nativestore",
		"scopes": models.IntegrationScopes}, nil), 201, "nativestore key")
	nativeKey, nativeSecret := nk.str(t, "key"), nk.str(t, "signing_secret")
	native := storeFixture(t, "processing_jpy.json", "")
	want(e.send(nil, "POST", "/integrations/v1/webhook/nativestore", nativeKey, native,
		map[string]string{"X-Store-Webhook-Signature": signNative(nativeSecret, native)}), 201, "nativestore order")
	want(e.send(nil, "POST", "/integrations/v1/webhook/nativestore", nativeKey, native,
		map[string]string{"X-Store-Webhook-Signature": signNative(made("whsec_"), native)}), 401, "nativestore bad signature")
	want(e.send(nil, "POST", "/integrations/v1/webhook/nativestore", nativeKey, native,
		map[string]string{"X-Store-Webhook-Signature": nativeSecret}), 401, "nativestore secret as signature")

	// Endpoint secrets: created (by the tenant), rotated with and without a grace period.
	for _, grace := range []int{0, 3600} {
		want(e.send(nil, "POST", "/admin/v1/rpc/outbound_webhook_rotate_secret", x.owner,
			map[string]any{"p_id": x.endpointID, "p_grace_seconds": grace}, nil), 200, "rotate endpoint secret")
	}
	want(e.send(nil, "POST", "/admin/v1/rpc/outbound_webhook_list", x.owner, map[string]any{"p_org_id": x.org}, nil), 200, "list endpoints")

	// Vendor claim tokens: claimed, claimed again, made up; and one issued in the console.
	want(e.send(nil, "POST", "/v1/vendor-claims", "", map[string]any{"token": x.claimToken, "email": "supplier@acme.test"}, nil), 200, "claim")
	want(e.send(nil, "POST", "/v1/vendor-claims", "", map[string]any{"token": x.claimToken, "email": "supplier@acme.test"}, nil), 400, "claim again")
	want(e.send(nil, "POST", "/v1/vendor-claims", "", map[string]any{"token": made("vct_"), "email": "x@acme.test"}, nil), 400, "made-up claim token")
	// Secrets pasted into a URL by mistake: a key where an id goes, a claim token in a link's path.
	want(e.send(nil, "GET", "/v1/orders/"+x.readKey, x.readKey, nil, nil), 404, "a key as an order id")
	want(e.send(nil, "GET", "/v1/vendor-claims/"+made("vct_"), "", nil, nil), 404, "a claim token in a path")
	// A signing secret of the form made now, whose '+' and '/' are not base64url, pasted into a path.
	signingShaped := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0xff, 0xbf}, 11)[:32])
	keep("made up by a caller", signingShaped)
	want(e.send(nil, "GET", "/v1/orders/"+signingShaped, x.readKey, nil, nil), 404, "a signing secret in a path")
	want(e.send(nil, "GET", "/integrations/v1/orders/by-external/"+url.PathEscape(x.intKey), x.intKey, nil, nil), 404, "a key as an external id")
	v2 := want(e.send(nil, "POST", orgPath+"/vendors", x.owner, map[string]any{"store_id": x.store, "name": "Second supplier"}, nil), 201, "vendor").str(t, "id")

	// The console: its session and CSRF token are secrets too; every kind of secret is minted there.
	b := x.console
	consoleURL, _ := url.Parse(e.srv.URL + "/console/")
	for _, c := range b.c.Jar.Cookies(consoleURL) {
		keep("console session", c.Value)
	}
	keep("console CSRF token", b.csrf)
	var consoleClaim string
	for _, step := range []struct {
		path string
		form url.Values
	}{
		{"/console/keys", url.Values{"name": {"console key"}, "scope": {"read_write"}}},
		{"/console/connectors", url.Values{"store_id": {x.store.String()}, "scopes": {"orders:write"}, "require_signature": {"1"}}},
		{"/console/webhooks", url.Values{"url": {"https://127.0.0.1/console-hook"}, "events": {"order.created"}}},
		{"/console/webhooks/" + x.consoleEndpointID.String() + "/rotate", url.Values{"confirmed": {"yes"}, "grace_seconds": {"0"}}},
		{"/console/vendors/" + v2 + "/claim-token", nil},
	} {
		a := e.post(b, step.path, step.form)
		if a.status != http.StatusOK || !secretShaped.Match(a.body) {
			t.Fatalf("console %s: %d, no secret shown: %.300s", step.path, a.status, a.body)
		}
		consoleClaim = secretShaped.FindString(string(a.body)) // the last step's: the claim token
	}
	want(e.send(nil, "POST", "/v1/vendor-claims", "", map[string]any{"token": consoleClaim, "email": "second@acme.test"}, nil), 200, "console claim token")
	// A sign-in that fails shows the form again, 401.
	jar, _ := cookiejar.New(nil)
	fresh := &http.Client{Jar: jar, CheckRedirect: b.c.CheckRedirect}
	want(e.login(fresh, made("wds_op_")), 401, "console sign-in with a made-up token")
	want(e.login(fresh, x.readKey), 401, "console sign-in with a read key")

	// Operator tokens: rotated by their holder (an owner may not), revoked; old ones refused, everywhere.
	want(e.send(nil, "POST", "/admin/v1/users/"+x.memberID.String()+"/rotate-token", x.owner, nil, nil), 403, "an owner rotating a member's token")
	member := want(e.send(nil, "POST", "/admin/v1/users/"+x.memberID.String()+"/rotate-token", x.member, nil, nil), 200, "rotate member").str(t, "token")
	want(e.send(nil, "GET", orgPath+"/read-keys", x.member, nil, nil), 401, "replaced member token")
	want(e.send(nil, "GET", orgPath+"/read-keys", member, nil, nil), 200, "rotated member token")
	member2 := want(e.send(nil, "POST", "/admin/v1/users/"+x.memberID.String()+"/rotate-token", member, nil, nil), 200, "member rotates own").str(t, "token")
	want(e.send(nil, "POST", "/admin/v1/users/"+x.memberID.String()+"/revoke-token", member2, nil, nil), 200, "member revokes own")
	want(e.send(nil, "GET", orgPath+"/read-keys", member2, nil, nil), 401, "revoked member token")
	want(e.login(fresh, member2), 401, "console sign-in with a revoked token")
	owner := want(e.send(nil, "POST", "/admin/v1/users/"+x.ownerID.String()+"/rotate-token", x.owner, nil, nil), 200, "owner rotates own").str(t, "token")
	want(e.send(nil, "GET", orgPath+"/audit-log", x.owner, nil, nil), 401, "replaced owner token")
	want(e.send(nil, "GET", orgPath+"/audit-log", owner, nil, nil), 200, "audit log")
	want(e.send(b.c, "GET", "/console/", "", nil, nil), 303, "the console session ended with the rotation")
	nb := e.signIn(owner)
	for _, c := range nb.c.Jar.Cookies(consoleURL) {
		keep("console session", c.Value)
	}
	keep("console CSRF token", nb.csrf)
	want(e.post(nb, "/console/logout", nil), 303, "console sign-out")
	e.lastUsed.Flush(ctx) // last_used_at writes log only their failures, but they run here too

	// Where to look: every log line, and every row of every table (the audit log named first).
	lines := logs.lines(t)
	seen := map[string]bool{}
	for _, l := range lines {
		if r, _ := l["route"].(string); r != "" {
			seen[strings.SplitN(strings.TrimPrefix(r, "/"), "/", 2)[0]] = true
		}
		if l["level"] == "error" {
			seen["error"] = true
		}
	}
	for _, what := range []string{"v1", "integrations", "admin", "console", "error"} {
		if !seen[what] {
			t.Errorf("no %s line was logged: the search would prove nothing there", what)
		}
	}
	places := map[string]string{"the log": logs.String()}
	var audit []string
	if err := db.Raw(`SELECT a::text FROM audit_log a ORDER BY created_at`).Find(&audit).Error; err != nil || len(audit) < 10 {
		t.Fatalf("audit rows: %d %v: the search would prove nothing", len(audit), err)
	}
	places["audit_log"] = strings.Join(audit, "\n")
	for table := range e.tables() {
		var text []string
		if err := db.Raw(fmt.Sprintf(`SELECT t::text FROM %s t`, table)).Find(&text).Error; err != nil {
			t.Fatal(err)
		}
		places["table "+table] = strings.Join(text, "\n")
	}

	kinds := map[string]int{}
	for s, what := range known {
		for _, p := range secretPrefixes {
			if strings.HasPrefix(s, p) {
				kinds[p]++
			}
		}
		if what == "console session" {
			kinds[what]++
		}
	}
	if kinds["console session"] < 2 {
		t.Errorf("%d console sessions were recorded, want 2: the cookie was not found", kinds["console session"])
	}
	for _, p := range secretPrefixes {
		if kinds[p] < 2 {
			t.Errorf("only %d secrets of kind %s were made: the sweep misses one", kinds[p], p)
		}
	}
	var leaks []string
	for s, what := range known {
		for _, form := range secretForms(s) {
			for place, text := range places {
				if i := strings.Index(text, form); i >= 0 {
					leaks = append(leaks, fmt.Sprintf("%s (%s %.12s...) is in %s: ...%s...", form, what, s, place, excerpt(text, i, len(form))))
				}
			}
		}
	}
	sort.Strings(leaks)
	for _, l := range leaks {
		t.Error(l)
	}
	t.Logf("looked for %d secrets in %d log lines, %d audit rows and %d tables", len(known), len(lines), len(audit), len(places)-2)
}

// excerpt is the text around a find, on one line.
func excerpt(text string, i, n int) string {
	from, to := max(0, i-80), min(len(text), i+n+80)
	b, _ := json.Marshal(text[from:to])
	return string(b)
}
