package e2e

import (
	"net/http"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"wds/internal/dev/temporaldev"
	"wds/test/npmtest"
	"wds/webhook"
)

// Receivers that verify with the Standard Webhooks project's official packages, the npm one and the
// Go one, accept what the running service delivers (docs/webhooks.md#standard-webhooks): an order's attempt, a resend,
// a test event, and deliveries during a rotation's grace with either secret. Each receiver answers
// 401 when its package refuses, so a refusal shows as a failed attempt too. (A tampered body and a
// stale timestamp are refused by both packages in the activities' tests, where the clock can be set.)
func TestStandardWebhooksPackagesVerifyRealDeliveries(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()

	npm := npmtest.StandardWebhooks(t)
	goLib := func(secret string, hd http.Header, body []byte) error {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return err
		}
		return wh.Verify(body, hd)
	}
	var mu sync.Mutex
	var secrets []string // the secrets the receiver knows; one must verify
	know := func(s ...string) { mu.Lock(); secrets = s; mu.Unlock() }
	rc := newReceiver(t, nil)
	rc.answer = func(n int) int {
		d := rc.deliveries()[n-1]
		mu.Lock()
		known := secrets
		mu.Unlock()
		for _, secret := range known {
			if npm(secret, d.header, d.body) == nil && goLib(secret, d.header, d.body) == nil {
				return http.StatusNoContent
			}
		}
		return http.StatusUnauthorized
	}
	ep := h.endpoint(rc, 1, "order.created")
	know(ep.secret)
	accepted := func(what string, n int, secret string) received {
		t.Helper()
		waitFor(t, 15*time.Second, what, func() bool { return rc.count() >= n })
		d := rc.deliveries()[n-1]
		for name, verify := range map[string]func(string, http.Header, []byte) error{"npm": npm, "Go": goLib} {
			if err := verify(secret, d.header, d.body); err != nil {
				t.Fatalf("%s: the %s package refuses it: %v", what, name, err)
			}
		}
		return d
	}

	if status, out := h.order("sw-1"); status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, out)
	}
	first := accepted("an order's delivery", 1, ep.secret)
	ev := first.eventID()
	if first.header.Get(webhook.HeaderWebhookID) != ev {
		t.Fatalf("webhook-id %q, event %s", first.header.Get(webhook.HeaderWebhookID), ev)
	}
	h.settled()

	if status, out := h.request(http.MethodPost, "/admin/v1/events/"+ev+"/resend", h.ownerToken, map[string]any{"endpoint_id": ep.id}); status != http.StatusAccepted {
		t.Fatalf("resend: %d %v", status, out)
	}
	if d := accepted("a resend", 2, ep.secret); d.header.Get(webhook.HeaderWebhookID) != ev || d.header.Get(webhook.HeaderDeliveryID) == first.header.Get(webhook.HeaderDeliveryID) {
		t.Fatalf("a resend: webhook-id %q, delivery %q", d.header.Get(webhook.HeaderWebhookID), d.header.Get(webhook.HeaderDeliveryID))
	}

	status, out := h.call("/v1/webhooks/test/"+ep.id.String(), h.readWriteKey, nil)
	if status != http.StatusOK {
		t.Fatalf("test: %d %v", status, out)
	}
	if d := accepted("a test event", 3, ep.secret); d.header.Get(webhook.HeaderWebhookID) != out["delivery_id"] {
		t.Fatalf("a test event's webhook-id %q, its delivery %v", d.header.Get(webhook.HeaderWebhookID), out["delivery_id"])
	}

	status, rot := h.call("/admin/v1/rpc/outbound_webhook_rotate_secret", h.ownerToken, map[string]any{"p_id": ep.id, "p_grace_seconds": 3600})
	if status != http.StatusOK {
		t.Fatalf("rotate: %d %v", status, rot)
	}
	rotated := rot["secret"].(string)
	know(ep.secret, rotated)
	if status, out := h.order("sw-2"); status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, out)
	}
	accepted("during the grace, with the old secret", 4, ep.secret)
	d := accepted("during the grace, with the new secret", 4, rotated)
	verify(t, d, rotated)
	verifyStandard(t, d, ep.secret)

	h.settled()
	for _, row := range h.deliveries(ep.id) {
		if row.Status != "succeeded" {
			t.Errorf("attempt %s: %s %s (the receiver answers 401 when a package refuses)", row.ID, row.Status, row.Error)
		}
	}
}
