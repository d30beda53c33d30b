// Package signing implements the two HMAC-SHA256 signature schemes of wds:
//
//   - the PC scheme, `t=<unix-seconds>,v1=<hex>` over "<t>.<raw body>", used for inbound
//     PC-Signature on generic integration keys and for outbound X-PC-Signature on webhooks;
//   - the nativestore scheme, base64 of HMAC-SHA256 over the raw body with no timestamp, used for
//     X-Store-Webhook-Signature.
//
// Secrets are the UTF-8 bytes of the secret string exactly as shown at creation (never hex- or
// base64-decoded), because that is what senders on the other side configure. The package is pure
// logic: callers fetch and decrypt secrets and map the sentinel errors to their own responses.
// Every comparison of signature bytes is constant-time so timing does not reveal how much of a
// forged signature was right.
package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors; callers match them with errors.Is. Wrapped reasons describe the shape of the
// input only and never carry secret material.
var (
	ErrSignatureMissing   = errors.New("signing: signature missing")
	ErrSignatureMalformed = errors.New("signing: signature malformed")
	ErrSignatureExpired   = errors.New("signing: signature expired")
	ErrSignatureInvalid   = errors.New("signing: signature invalid")
)

// Tolerance is the largest accepted distance between the signed timestamp and the verifier's clock,
// in either direction, so that a captured request cannot be replayed later.
const Tolerance = 300 * time.Second

// Header is a parsed `t=...,v1=...` signature header.
type Header struct {
	// Timestamp is t, in Unix seconds.
	Timestamp int64
	// Signatures holds every v1 value decoded to its 32 HMAC bytes; senders may send several
	// while they rotate secrets, and one match is enough.
	Signatures [][]byte
}

// ParseHeader parses a PC-Signature or X-PC-Signature value. An empty (or all-whitespace) value
// yields ErrSignatureMissing; anything else that is not exactly one canonical t and at least one
// 64-hex-digit v1 yields ErrSignatureMalformed. Unknown keys such as v0 are ignored so the scheme
// can grow new versions without breaking older verifiers.
func ParseHeader(value string) (Header, error) {
	if strings.TrimSpace(value) == "" {
		return Header{}, ErrSignatureMissing
	}
	var p headerParser
	for elem := range strings.SplitSeq(value, ",") {
		if err := p.element(strings.TrimSpace(elem)); err != nil {
			return Header{}, err
		}
	}
	return p.result()
}

// headerParser accumulates elements; hasT is separate because t=0 is syntactically valid.
type headerParser struct {
	h    Header
	hasT bool
}

func (p *headerParser) element(elem string) error {
	key, val, ok := strings.Cut(elem, "=")
	if !ok || key == "" {
		return malformed("element is not key=value")
	}
	switch key {
	case "t":
		if p.hasT {
			return malformed("duplicate t")
		}
		t, err := parseTimestamp(val)
		if err != nil {
			return err
		}
		p.h.Timestamp, p.hasT = t, true
	case "v1":
		sig, err := parseV1(val)
		if err != nil {
			return err
		}
		p.h.Signatures = append(p.h.Signatures, sig)
	}
	return nil
}

func (p *headerParser) result() (Header, error) {
	if !p.hasT {
		return Header{}, malformed("missing t")
	}
	if len(p.h.Signatures) == 0 {
		return Header{}, malformed("missing v1")
	}
	return p.h, nil
}

// parseTimestamp accepts only the canonical decimal form (digits, no sign, no leading zeros).
// The signed material is "<t>." and the verifier rebuilds it from the parsed integer, so only a
// canonical t guarantees the rebuilt text is byte-for-byte what the sender signed.
func parseTimestamp(val string) (int64, error) {
	if val == "" || strings.TrimLeft(val, "0123456789") != "" {
		return 0, malformed("t is not a decimal integer")
	}
	if len(val) > 1 && val[0] == '0' {
		return 0, malformed("t has leading zeros")
	}
	t, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		return 0, malformed("t out of range")
	}
	return t, nil
}

func parseV1(val string) ([]byte, error) {
	if len(val) != hex.EncodedLen(sha256.Size) {
		return nil, malformed("v1 is not 64 hex digits")
	}
	sig, err := hex.DecodeString(val)
	if err != nil {
		return nil, malformed("v1 is not 64 hex digits")
	}
	return sig, nil
}

func malformed(reason string) error {
	return fmt.Errorf("%w: %s", ErrSignatureMalformed, reason)
}

// VerifyPC checks a PC-scheme header against the raw body at the verifier's time now. Expiry is
// checked before the HMAC, as Stripe does: a stale request is expired whatever its signature, and
// no MAC is computed for it.
func VerifyPC(secret []byte, header string, body []byte, now time.Time) error {
	h, err := ParseHeader(header)
	if err != nil {
		return err
	}
	if expired(h.Timestamp, now) {
		return ErrSignatureExpired
	}
	want := macPC(secret, h.Timestamp, body)
	for _, got := range h.Signatures {
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignatureInvalid
}

// expired reports whether |now - t| > Tolerance, exactly, including now's sub-second part.
// It works on whole seconds in uint64 because t comes from the outside and may be near the int64
// limits, where time.Unix(t, 0) or a signed subtraction would overflow.
func expired(t int64, now time.Time) bool {
	const tol = uint64(Tolerance / time.Second)
	n := now.Unix() // now == n + now.Nanosecond() ns, with 0 <= Nanosecond < 1e9
	if t > n {
		return uint64(t)-uint64(n) > tol
	}
	d := uint64(n) - uint64(t)
	return d > tol || (d == tol && now.Nanosecond() > 0)
}

// SignPC returns the header value `t=<t>,v1=<lowercase hex>` for body signed at Unix time t.
// t must be non-negative (a real clock reading): ParseHeader rejects a sign on t.
func SignPC(secret []byte, t int64, body []byte) string {
	return "t=" + strconv.FormatInt(t, 10) + ",v1=" + hex.EncodeToString(macPC(secret, t, body))
}

func macPC(secret []byte, t int64, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(strconv.AppendInt(nil, t, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// nativestoreLen is the length of standard padded base64 of a SHA-256 HMAC.
var nativestoreLen = base64.StdEncoding.EncodedLen(sha256.Size)

// VerifyNativestore checks an X-Store-Webhook-Signature value against the raw body. The value
// must be the one canonical encoding (exact length, strict padding bits), so comparing the decoded
// bytes is the same as the case-sensitive string comparison the platform specifies, while still
// telling a garbled header (malformed) from a wrong one (invalid).
func VerifyNativestore(secret []byte, header string, body []byte) error {
	if strings.TrimSpace(header) == "" {
		return ErrSignatureMissing
	}
	if len(header) != nativestoreLen {
		return malformed("not base64 of 32 bytes")
	}
	got, err := base64.StdEncoding.Strict().DecodeString(header)
	if err != nil || len(got) != sha256.Size {
		return malformed("not base64 of 32 bytes")
	}
	if !hmac.Equal(got, macNativestore(secret, body)) {
		return ErrSignatureInvalid
	}
	return nil
}

// SignNativestore returns the X-Store-Webhook-Signature value for body.
func SignNativestore(secret, body []byte) string {
	return base64.StdEncoding.EncodeToString(macNativestore(secret, body))
}

func macNativestore(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}
