// Package webhook verifies and decodes the webhooks wds delivers. It is meant to be imported by
// receivers, and wds itself signs with it, so the rules below are the ones the sender follows.
//
// A delivery is a POST whose X-PC-Signature header is `t=<unix seconds>,v1=<hex>`, where v1 is the
// lowercase hex HMAC-SHA256 of "<t>.<raw body>" keyed by the UTF-8 bytes of the endpoint secret
// (the `whsec_...` string exactly as shown when the endpoint was created). A receiver:
//
//  1. parses t and v1 from X-PC-Signature;
//  2. signs the raw body bytes it received, never re-serialised JSON;
//  3. compares in constant time (any one of several v1 values may match);
//  4. rejects a t more than 300 s from its own clock, in either direction;
//  5. deduplicates side effects on X-PC-Event-Id: retries reuse it, X-PC-Delivery-Id is new
//     for every attempt.
//
// [Verify] does 1 to 4 and [Parse] also decodes the [Event]; 5 is the receiver's own storage.
// The scheme is Stripe's: given the X-PC-Signature value in place of Stripe-Signature, Stripe's
// Node library accepts wds deliveries unchanged (this package's tests check it).
//
// Every delivery also carries the Standard Webhooks headers (webhook-id, webhook-timestamp,
// webhook-signature), signed from the same secret, which the specification's official libraries
// verify; [VerifyStandard] checks those, and [VerifyHeaders] and [ParseHeaders] take a request's
// headers and accept either scheme.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
)

// Headers of every delivery.
const (
	HeaderSignature  = "X-PC-Signature"   // t=<unix seconds>,v1=<hex>
	HeaderTimestamp  = "X-PC-Timestamp"   // t of the signature, for logs; the signature carries its own
	HeaderEventID    = "X-PC-Event-Id"    // the event's UUID, the same on every retry; "null" for webhook.test
	HeaderEventType  = "X-PC-Event-Type"  // the event's type, such as order.created
	HeaderDeliveryID = "X-PC-Delivery-Id" // the attempt's UUID, new for every attempt
)

// Tolerance is the largest accepted distance between a signature's t and the receiver's clock, in
// either direction, so that a captured delivery cannot be replayed later.
const Tolerance = 300 * time.Second

// Event is the body of every delivery: wds encodes this very type with encoding/json, so its
// fields' order is the order on the wire, and GET /v1/event-types' schemas are tested against it.
type Event struct {
	// ID is the event's UUID, the same for every attempt; nil for webhook.test events.
	ID   *string `json:"id"`
	Type string  `json:"type"`
	// CreatedAt is when the event was written, in UTC (RFC 3339 with up to microseconds on the wire).
	CreatedAt time.Time `json:"created_at"`
	OrgID     string    `json:"org_id"`
	// StoreID is nil for events of the org rather than one of its stores.
	StoreID *string `json:"store_id"`
	// Summarized is true when the event was over the 6 MB payload cap: Data then holds the
	// resource's id only, Detail says why, and the receiver fetches the resource from the Read API.
	Summarized bool `json:"summarized,omitempty"`
	// Data is the resource as the Read API shows it (GET /v1/event-types has each type's schema),
	// or {"id": ...} only when Summarized.
	Data   json.RawMessage `json:"data"`
	Detail string          `json:"detail,omitempty"`
}

// Verify checks that header (the X-PC-Signature value) signs body with secret and is within
// Tolerance of now. The errors are [ErrMissingHeader], a [*HeaderError] ([ErrMalformedHeader]), a
// [*TimestampError] ([ErrTooOld] or [ErrTooNew]) and [ErrBadSignature]. The timestamp is checked
// before the HMAC, so a stale delivery is reported as stale whatever its signature.
func Verify(secret, header string, body []byte, now time.Time) error {
	h, err := ParseHeader(header)
	if err != nil {
		return err
	}
	if err := checkTimestamp(h.Timestamp, now); err != nil {
		return err
	}
	want := mac([]byte(secret), h.Timestamp, body)
	for _, got := range h.Signatures {
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrBadSignature
}

// Parse verifies like [Verify], then decodes body. A body that fails to verify is never decoded.
func Parse(secret, header string, body []byte, now time.Time) (*Event, error) {
	if err := Verify(secret, header, body, now); err != nil {
		return nil, err
	}
	return decode(body)
}

// Sign returns the X-PC-Signature value for body signed at t: what wds sends, and what a
// receiver's own tests can use to make deliveries. t before 1970 gives a header Verify rejects.
// During a secret rotation's grace period wds signs with the previous secrets too, one v1= each,
// so a receiver that knows either secret verifies.
func Sign(secret string, t time.Time, body []byte, previous ...string) string {
	ts := t.Unix()
	h := "t=" + strconv.FormatInt(ts, 10) + ",v1=" + hex.EncodeToString(mac([]byte(secret), ts, body))
	for _, p := range previous {
		h += ",v1=" + hex.EncodeToString(mac([]byte(p), ts, body))
	}
	return h
}

func mac(secret []byte, t int64, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(strconv.AppendInt(nil, t, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}
