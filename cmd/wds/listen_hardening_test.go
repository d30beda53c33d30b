package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"wds/internal/endpoints"
	"wds/internal/platform/database"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
	"wds/webhook"
)

// wds listen forwards only deliveries whose signature verified: anyone on the laptop (a web page
// included) can reach its port, and the local app trusts what wds listen hands it.
func TestListenForwardsOnlyVerifiedDeliveries(t *testing.T) {
	var forwarded atomic.Int32
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forwarded.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer app.Close()
	secret, _ := secrets.NewSigningSecret()
	var out bytes.Buffer
	l := &listener{secret: secret, forwardTo: app.URL, client: app.Client(), out: &out}
	body := []byte(`{"id":"e1","type":"order.created"}`)
	post := func(signature string) int {
		req := httptest.NewRequest("POST", "/hooks", bytes.NewReader(body))
		req.Header.Set(webhook.HeaderSignature, signature)
		rec := httptest.NewRecorder()
		l.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, sig := range []string{"", "t=1,v1=00", webhook.Sign("whsec_someone_else", time.Now(), body)} {
		if code := post(sig); code != http.StatusBadRequest {
			t.Errorf("signature %q: %d, want 400", sig, code)
		}
	}
	if n := forwarded.Load(); n != 0 {
		t.Fatalf("%d unverified deliveries reached the local app", n)
	}
	if code := post(webhook.Sign(secret, time.Now(), body)); code != http.StatusAccepted || forwarded.Load() != 1 {
		t.Fatalf("a verified delivery: %d, forwarded %d", code, forwarded.Load())
	}
	// The Standard Webhooks headers alone verify too (docs/webhooks.md#standard-webhooks); a wrong one does not.
	standard := func(signer string, at time.Time) int {
		sig, err := webhook.SignStandard("e1", at, body, signer)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("POST", "/hooks", bytes.NewReader(body))
		req.Header.Set(webhook.HeaderWebhookID, "e1")
		req.Header.Set(webhook.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
		req.Header.Set(webhook.HeaderWebhookSignature, sig)
		rec := httptest.NewRecorder()
		l.ServeHTTP(rec, req)
		return rec.Code
	}
	other, _ := secrets.NewSigningSecret()
	if code := standard(other, time.Now()); code != http.StatusBadRequest {
		t.Errorf("webhook-signature of another secret: %d, want 400", code)
	}
	if code := standard(secret, time.Now().Add(-301*time.Second)); code != http.StatusBadRequest {
		t.Errorf("a stale webhook-timestamp: %d, want 400", code)
	}
	if code := standard(secret, time.Now()); code != http.StatusAccepted || forwarded.Load() != 2 {
		t.Fatalf("a delivery verified by its Standard Webhooks headers: %d, forwarded %d", code, forwarded.Load())
	}
}

// What wds listen prints of a delivery comes from the network: terminal control characters in it
// (escape sequences that move the cursor, rewrite the title or the clipboard) are shown as
// visible escapes, never written to the terminal.
func TestListenPrintsNoTerminalControlCharacters(t *testing.T) {
	var out bytes.Buffer
	l := &listener{secret: "whsec_x", out: &out}
	req := httptest.NewRequest("POST", "/hooks", strings.NewReader("not json \x1b]52;c;cGF5bG9hZA==\x07 \x1b[2J\u009b31m\r\x00 end"))
	req.Header.Set(webhook.HeaderEventType, "order.created\u009b2J")
	req.Header.Set(webhook.HeaderEventID, "evt\x7f")
	l.ServeHTTP(httptest.NewRecorder(), req)
	printed := out.String()
	for _, r := range printed {
		if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f)) {
			t.Fatalf("printed control character %U:\n%q", r, printed)
		}
	}
	if !strings.Contains(printed, "end") || !strings.Contains(printed, `\x1b`) {
		t.Fatalf("the body is not shown with its control characters escaped:\n%q", printed)
	}
}

// SIGHUP (the terminal closed) ends wds listen like Ctrl-C: its endpoint is deleted, so it does not
// keep one of the org's ten slots. While it runs the endpoint is on a lease.
func TestListenDeletesItsEndpointOnSIGHUP(t *testing.T) {
	url, dir := pgtest.URL(t), t.TempDir()
	if _, err := ensureDevCA(dir); err != nil {
		t.Fatal(err)
	}
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	org, _ := workspace.NewService(db).CreateOrg(context.Background(), "Acme")
	owner, _, _ := workspace.NewService(db).CreateUser(context.Background(), org.ID, "owner@acme.test", models.RoleOwner)
	l := startWDS(t, []string{"DATABASE_URL=" + url, "WDS_DATA_DIR=" + dir, "WDS_ENCRYPTION_KEY=" + secrets.GenerateKey()},
		"listen", "--org", org.ID.String(), "--actor", owner.ID.String(), "--events", "client.created")
	waitFor(t, "wds listen to be ready", func() bool { return strings.Contains(l.out.String(), "Ready: endpoint ") })
	// The endpoint is on a lease: should wds listen die without deleting it, it expires by itself.
	var left float64
	db.Raw(`SELECT extract(epoch FROM lease_until - now()) FROM webhook_endpoints WHERE org_id = ?`, org.ID).Scan(&left)
	if d := time.Duration(left) * time.Second; d < endpoints.LeaseTTL-time.Minute || d > endpoints.LeaseTTL {
		t.Errorf("the listener's endpoint lease ends in %v, want %v", d, endpoints.LeaseTTL)
	}
	if err := l.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	<-l.exited
	var ep models.Endpoint
	db.Where("org_id = ?", org.ID).Take(&ep)
	if l.err != nil || ep.DeletedAt == nil || ep.Enabled {
		t.Fatalf("after SIGHUP: exit %v, endpoint enabled %v deleted %v\n%s", l.err, ep.Enabled, ep.DeletedAt, l.out.String())
	}
}
