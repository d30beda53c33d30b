package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"wds/api/signing"
	"wds/webhook"
)

// received is one request a receiver got, with when it arrived.
type received struct {
	header http.Header
	body   []byte
	at     time.Time
	query  string // the URL's query, as the receiver was called
}

func (d received) eventID() string   { return d.header.Get("X-PC-Event-Id") }
func (d received) eventType() string { return d.header.Get("X-PC-Event-Type") }

// receiver is a real TLS endpoint. answer picks the status for the n-th request (1-based).
type receiver struct {
	srv    *httptest.Server
	answer func(n int) int
	// onRequest runs before answering, for tests that act at a precise moment of the chain.
	onRequest func(n int)

	mu  sync.Mutex
	got []received
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	t.Helper()
	return newReceiverSaying(t, answer, "")
}

// newReceiverSaying is newReceiver whose answers other than 2xx carry text as their body, as a
// receiver that explains its refusal ("bad signature") does.
func newReceiverSaying(t *testing.T, answer func(n int) int, text string) *receiver {
	t.Helper()
	rc := &receiver{answer: answer}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{header: r.Header.Clone(), body: b, at: time.Now(), query: r.URL.RawQuery})
		n := len(rc.got)
		rc.mu.Unlock()
		if rc.onRequest != nil {
			rc.onRequest(n)
		}
		status := http.StatusOK
		if rc.answer != nil {
			status = rc.answer(n)
		}
		w.WriteHeader(status)
		if status >= 300 && text != "" {
			_, _ = io.WriteString(w, text)
		}
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func ok(int) int { return http.StatusOK }

// failFirst answers 500 to the first k requests, then 200.
func failFirst(k int) func(int) int {
	return func(n int) int {
		if n <= k {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
}

func (rc *receiver) deliveries() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func (rc *receiver) count() int { return len(rc.deliveries()) }

// verify applies the spec's receiver verification rules with secret and checks every header.
func verify(t *testing.T, d received, secret string) {
	t.Helper()
	h := d.header
	if h.Get("Content-Type") != "application/json" || h.Get("User-Agent") != "WDS-Webhook/1.0" || h.Get("X-PC-Event-Type") == "" ||
		h.Get("X-PC-Event-Id") == "" || h.Get("X-PC-Delivery-Id") == "" {
		t.Errorf("headers %v", h)
	}
	// Checked as of arrival, as a receiver checks: the timestamp is fresh for each attempt.
	ts, err := strconv.ParseInt(h.Get("X-PC-Timestamp"), 10, 64)
	if err != nil || d.at.Sub(time.Unix(ts, 0)).Abs() > 2*time.Second {
		t.Errorf("X-PC-Timestamp %q", h.Get("X-PC-Timestamp"))
	}
	parsed, err := webhook.ParseHeader(h.Get(webhook.HeaderSignature))
	if err != nil || parsed.Timestamp != ts {
		t.Errorf("X-PC-Signature %q does not sign X-PC-Timestamp", h.Get("X-PC-Signature"))
	}
	if err := signing.VerifyPC([]byte(secret), h.Get("X-PC-Signature"), d.body, d.at); err != nil {
		t.Errorf("signature does not verify: %v", err)
	}
	verifyStandard(t, d, secret)
	var body map[string]any
	if err := json.NewDecoder(bytes.NewReader(d.body)).Decode(&body); err != nil {
		t.Errorf("body is not JSON: %v", err)
	}
}

// verifyStandard checks a delivery's Standard Webhooks headers (docs/webhooks.md#standard-webhooks) with the Standard
// Webhooks project's own Go library: the id is the event's (the attempt's for a test event), the
// instant is X-PC-Timestamp's, and the signature verifies with secret. The library checks the
// timestamp against the real clock, so it is checked here as of arrival instead.
func verifyStandard(t *testing.T, d received, secret string) {
	t.Helper()
	h := d.header
	id := d.eventID()
	if id == "null" {
		id = h.Get(webhook.HeaderDeliveryID)
	}
	if h.Get(webhook.HeaderWebhookID) != id || h.Get(webhook.HeaderWebhookTimestamp) != h.Get(webhook.HeaderTimestamp) {
		t.Errorf("webhook-id %q (want %q), webhook-timestamp %q (X-PC-Timestamp %q)", h.Get(webhook.HeaderWebhookID), id,
			h.Get(webhook.HeaderWebhookTimestamp), h.Get(webhook.HeaderTimestamp))
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Errorf("the Standard Webhooks library refuses the secret: %v", err)
		return
	}
	if err := wh.VerifyIgnoringTimestamp(d.body, h); err != nil {
		t.Errorf("the Standard Webhooks library does not verify the delivery: %v", err)
	}
}
