package activities_test

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"wds/internal/events"
	"wds/models"
	"wds/test/deliverytest"
	"wds/test/npmtest"
	"wds/webhook"
	"wds/workflows/contract"
)

// libraryReceiver verifies every delivery with one of the Standard Webhooks project's own libraries,
// as a receiver that has never heard of wds would, and answers 204 when it verifies and 401 when
// not. tamper flips a byte of the body before verifying, as a change in transit would.
type libraryReceiver struct {
	verify func(secret string, h http.Header, body []byte) error
	mu     sync.Mutex
	secret string
	tamper bool
	errs   []error
}

func (lr *libraryReceiver) handle(w http.ResponseWriter, r *http.Request, body []byte) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.tamper {
		body = append([]byte(nil), body...)
		body[len(body)-2] ^= 1
	}
	err := lr.verify(lr.secret, r.Header, body)
	lr.errs = append(lr.errs, err)
	if err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// goLibrary verifies with github.com/standard-webhooks/standard-webhooks/libraries/go.
func goLibrary(secret string, h http.Header, body []byte) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	return wh.Verify(body, h)
}

func (lr *libraryReceiver) set(secret string, tamper bool) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.secret, lr.tamper = secret, tamper
}

func (lr *libraryReceiver) last() error {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.errs[len(lr.errs)-1]
}

// Every kind of delivery (a first attempt, a retry, a resend, a test event, one signed during a
// rotation's grace, with either secret) verifies with the Standard Webhooks project's official Go
// library and its npm package; a tampered body and a stale timestamp do not (docs/webhooks.md#standard-webhooks).
func TestTheStandardWebhooksGoLibraryVerifiesEveryDelivery(t *testing.T) {
	receivedBy(t, &libraryReceiver{verify: goLibrary}, standardwebhooks.ErrNoMatchingSignature, standardwebhooks.ErrMessageTooOld)
}

func TestTheStandardWebhooksNpmPackageVerifiesEveryDelivery(t *testing.T) {
	receivedBy(t, &libraryReceiver{verify: npmtest.StandardWebhooks(t)}, errors.New("No matching signature found"), errors.New("Message timestamp too old"))
}

// receivedBy delivers every kind of delivery to lr; mismatch and stale are the library's errors
// for a tampered body and a stale timestamp (matched by errors.Is, or by message from node).
func receivedBy(t *testing.T, lr *libraryReceiver, mismatch, stale error) {
	f := newFixture(t)
	var rc *deliverytest.Receiver
	rc = deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		got := rc.Got()
		lr.handle(w, r, got[len(got)-1].Body)
	})
	ep := f.Endpoint(rc.Srv.URL)
	lr.set(ep.Secret, false)
	acts := f.Acts(rc, true)
	deliver := func(name string, in contract.AttemptInput, want models.Status) http.Header {
		t.Helper()
		res, err := acts.Deliver(f.Ctx, in)
		if err != nil || res.Outcome != want {
			t.Fatalf("%s: outcome %+v (want %s), err %v, the library said %v", name, res, want, err, lr.last())
		}
		got := rc.Got()
		return got[len(got)-1].Header
	}

	ev := f.Event(events.OrderCreated, map[string]any{"id": uuid.New(), "total_cents": 1250})
	first := deliverytest.Attempt(ev, ep.ID, 1, deliverytest.Later())
	h := deliver("an attempt", first, models.StatusSucceeded)
	if h.Get(webhook.HeaderWebhookID) != ev.String() || h.Get(webhook.HeaderWebhookTimestamp) != h.Get(webhook.HeaderTimestamp) {
		t.Fatalf("webhook-id %q (event %s), webhook-timestamp %q (X-PC-Timestamp %q)", h.Get(webhook.HeaderWebhookID), ev,
			h.Get(webhook.HeaderWebhookTimestamp), h.Get(webhook.HeaderTimestamp))
	}
	retry := first
	retry.DeliveryID, retry.Attempt = uuid.New(), 2
	if h := deliver("a retry", retry, models.StatusSucceeded); h.Get(webhook.HeaderWebhookID) != ev.String() {
		t.Fatalf("a retry's webhook-id %q", h.Get(webhook.HeaderWebhookID))
	}

	f.DB.Exec(`UPDATE events SET dispatched_at = now() WHERE id = ?`, ev) // its fan-out is over
	resent, err := f.Resends.Resend(f.Ctx, ev, f.Owner, &ep.ID)
	if err != nil || len(resent.Chains) != 1 {
		t.Fatalf("resend: %+v %v", resent, err)
	}
	rs := contract.AttemptInput{DeliveryID: uuid.New(), EventID: ev, EndpointID: ep.ID, ChainID: resent.Chains[0].ChainID,
		WorkflowID: resent.Chains[0].WorkflowID, Attempt: 1}
	if h := deliver("a resend", rs, models.StatusSucceeded); h.Get(webhook.HeaderWebhookID) != ev.String() {
		t.Fatalf("a resend's webhook-id %q", h.Get(webhook.HeaderWebhookID))
	}

	q, err := f.Resends.SendTest(f.Ctx, f.Org, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	var disp models.Dispatch
	f.DB.Where("id = ?", q.DispatchID).Take(&disp)
	test := contract.AttemptInput{DeliveryID: q.DeliveryID, EventID: disp.EventID, EndpointID: ep.ID, ChainID: disp.ChainID, Attempt: 1, Test: true}
	if h := deliver("a test event", test, models.StatusSucceeded); h.Get(webhook.HeaderWebhookID) != q.DeliveryID.String() {
		t.Fatalf("a test event's webhook-id %q, want its delivery id %s", h.Get(webhook.HeaderWebhookID), q.DeliveryID)
	}

	rot, err := f.Svc.RotateSecret(f.Ctx, ep.ID, f.Owner, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for name, secret := range map[string]string{"the old secret": ep.Secret, "the new secret": rot.Secret} {
		lr.set(secret, false)
		deliver("during the grace, with "+name, deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later()), models.StatusSucceeded)
	}

	lr.set(rot.Secret, true)
	deliver("a tampered body", deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later()), models.StatusFailed)
	if err := lr.last(); !sameError(err, mismatch) {
		t.Fatalf("a tampered body: %v", err)
	}

	lr.set(rot.Secret, false)
	acts.Now = func() time.Time { return time.Now().Add(-6 * time.Minute) }
	deliver("a stale timestamp", deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later()), models.StatusFailed)
	if err := lr.last(); !sameError(err, stale) {
		t.Fatalf("a stale timestamp: %v", err)
	}
}

func sameError(err, want error) bool {
	return err != nil && (errors.Is(err, want) || err.Error() == want.Error())
}

// An endpoint whose secret was made before secrets were standard base64 (whsec_ and unpadded
// base64url) keeps getting both schemes: X-PC-Signature keyed by the whole string, and
// webhook-signature keyed by what its base64url decodes to (docs/webhooks.md#standard-webhooks).
func TestASecretOfTheOlderFormSignsBothSchemes(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep := f.Endpoint(rc.Srv.URL)
	const older = "whsec_bPE_e5DN-TGC5blbvm_B_hwyacej94L-8CbwSW71KTE"
	sealed, err := f.Box.Seal([]byte(older))
	if err != nil {
		t.Fatal(err)
	}
	f.DB.Exec(`UPDATE webhook_endpoints SET secret_sealed = ? WHERE id = ?`, sealed, ep.ID)
	ev := f.Event(events.OrderCreated, nil)
	if res, err := f.Acts(rc, true).Deliver(f.Ctx, deliverytest.Attempt(ev, ep.ID, 1, deliverytest.Later())); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("%+v %v", res, err)
	}
	d := rc.Got()[0]
	if err := webhook.Verify(older, d.Header.Get(webhook.HeaderSignature), d.Body, time.Now()); err != nil {
		t.Errorf("X-PC-Signature: %v", err)
	}
	h := d.Header
	if err := webhook.VerifyStandard(older, h.Get(webhook.HeaderWebhookID), h.Get(webhook.HeaderWebhookTimestamp), h.Get(webhook.HeaderWebhookSignature), d.Body, time.Now()); err != nil {
		t.Errorf("webhook-signature (%q): %v", h.Get(webhook.HeaderWebhookSignature), err)
	}
	if h.Get(webhook.HeaderWebhookID) != ev.String() {
		t.Errorf("webhook-id %q", h.Get(webhook.HeaderWebhookID))
	}
}
