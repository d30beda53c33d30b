package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (standardwebhooks.com), which every delivery carries beside the
// X-PC-* ones, from the same secret, so that the specification's official libraries verify wds.
const (
	// HeaderWebhookID is the event id, the same on every attempt and resend; for webhook.test,
	// whose event id is null, the attempt's delivery id.
	HeaderWebhookID = "webhook-id"
	// HeaderWebhookTimestamp is Unix seconds, the same instant as X-PC-Timestamp.
	HeaderWebhookTimestamp = "webhook-timestamp"
	// HeaderWebhookSignature is one "v1,<base64 HMAC-SHA256>" per signing secret, space-separated.
	HeaderWebhookSignature = "webhook-signature"
)

// StandardKey is the HMAC key of the Standard Webhooks scheme for a signing secret: the bytes that
// the base64 after "whsec_" decodes to. Secrets wds makes now are standard padded base64, the form
// the official libraries decode; secrets made before are unpadded base64url, which decodes here too
// (some libraries refuse that form: rotate such a secret to get one they accept). A secret that is
// neither gives an error: it was not made by wds.
func StandardKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return nil, fmt.Errorf("webhook: the signing secret does not start with whsec_")
	}
	if key, err := base64.StdEncoding.DecodeString(rest); err == nil && len(key) > 0 {
		return key, nil
	}
	if key, err := base64.RawURLEncoding.DecodeString(rest); err == nil && len(key) > 0 {
		return key, nil
	}
	return nil, fmt.Errorf("webhook: the signing secret is not whsec_ and base64")
}

// SignStandard returns the webhook-signature value for body sent as id at t: "v1,<base64>" for
// each secret (the current one first, then those still in a rotation's grace), space-separated.
// What wds sends, and what a receiver's tests can use to make deliveries. It fails only for a
// secret StandardKey refuses.
func SignStandard(id string, t time.Time, body []byte, secrets ...string) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := StandardKey(s)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(standardMAC(key, id, t.Unix(), body)))
	}
	return strings.Join(sigs, " "), nil
}

// VerifyStandard checks the Standard Webhooks headers of a delivery: that signature (the
// webhook-signature value) holds a v1 HMAC of "<id>.<timestamp>.<body>" keyed by StandardKey(secret),
// and that timestamp is within Tolerance of now. Its errors match Verify's: a [*MissingError]
// ([ErrMissingHeader]) when a header is empty, a [*HeaderError] naming the header, a
// [*TimestampError] (checked before the HMAC), and [ErrBadSignature].
func VerifyStandard(secret, id, timestamp, signature string, body []byte, now time.Time) error {
	for _, h := range [...]struct{ name, value string }{{HeaderWebhookID, id}, {HeaderWebhookTimestamp, timestamp}, {HeaderWebhookSignature, signature}} {
		if strings.TrimSpace(h.value) == "" {
			return &MissingError{Header: h.name}
		}
	}
	ts, err := parseTimestamp(timestamp)
	if err != nil {
		return &HeaderError{Header: HeaderWebhookTimestamp, Reason: "not a decimal integer without sign or leading zeros"}
	}
	var sigs [][]byte
	for elem := range strings.FieldsSeq(signature) {
		version, val, ok := strings.Cut(elem, ",")
		if !ok {
			return &HeaderError{Header: HeaderWebhookSignature, Reason: "element is not version,signature"}
		}
		if version != "v1" {
			continue // another scheme (v1a is asymmetric): not ours, and not a reason to refuse
		}
		sig, err := base64.StdEncoding.Strict().DecodeString(val)
		if err != nil || len(sig) != sha256.Size {
			return &HeaderError{Header: HeaderWebhookSignature, Reason: "v1 is not the base64 of 32 bytes"}
		}
		sigs = append(sigs, sig)
	}
	if len(sigs) == 0 {
		return &HeaderError{Header: HeaderWebhookSignature, Reason: "no v1"}
	}
	if err := checkTimestamp(ts, now); err != nil {
		err.(*TimestampError).Header = HeaderWebhookTimestamp
		return err
	}
	key, err := StandardKey(secret)
	if err != nil {
		return ErrBadSignature
	}
	want := standardMAC(key, id, ts, body)
	for _, got := range sigs {
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrBadSignature
}

// VerifyHeaders verifies a delivery by either scheme, from its request headers: X-PC-Signature
// when the request has one (as [Verify]), the Standard Webhooks headers otherwise (as
// [VerifyStandard]). A request with neither is [ErrMissingHeader].
func VerifyHeaders(secret string, h http.Header, body []byte, now time.Time) error {
	if sig := h.Get(HeaderSignature); strings.TrimSpace(sig) != "" || h.Get(HeaderWebhookSignature) == "" {
		return Verify(secret, sig, body, now)
	}
	return VerifyStandard(secret, h.Get(HeaderWebhookID), h.Get(HeaderWebhookTimestamp), h.Get(HeaderWebhookSignature), body, now)
}

// ParseHeaders verifies like [VerifyHeaders], then decodes body. A body that fails to verify is
// never decoded.
func ParseHeaders(secret string, h http.Header, body []byte, now time.Time) (*Event, error) {
	if err := VerifyHeaders(secret, h, body, now); err != nil {
		return nil, err
	}
	return decode(body)
}

func standardMAC(key []byte, id string, t int64, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, t, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

func decode(body []byte) (*Event, error) {
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("webhook: decode event body: %w", err)
	}
	return &ev, nil
}
