// Package signing implements the two HMAC-SHA256 signature schemes of wds:
//
//   - the PC scheme, `t=<unix-seconds>,v1=<hex>` over "<t>.<raw body>", used for inbound
//     PC-Signature on generic integration keys and for outbound X-PC-Signature on webhooks,
//     implemented once in the public package wds/webhook and adapted here;
//   - the nativestore scheme, base64 of HMAC-SHA256 over the raw body with no timestamp, used for
//     X-Store-Webhook-Signature.
//
// Secrets are the UTF-8 bytes of the secret string exactly as shown at creation (never hex- or
// base64-decoded), because that is what senders on the other side configure. The package is pure
// logic: callers fetch and decrypt secrets; each error matches a sentinel (errors.Is) and carries the
// detail its answer shows.
// Every comparison of signature bytes is constant-time so timing does not reveal how much of a
// forged signature was right.
package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"wds/internal/platform/problem"
	"wds/webhook"
)

// Sentinel errors; callers match them with errors.Is. A request whose signature fails is not
// authenticated. Wrapped reasons describe the shape of the input only and never carry secret material.
var (
	ErrSignatureMissing   = problem.New(problem.Unauthorized, "signature_missing", "signing: signature missing")
	ErrSignatureMalformed = problem.New(problem.Unauthorized, "signature_malformed", "signing: signature malformed")
	ErrSignatureExpired   = problem.New(problem.Unauthorized, "signature_expired", "signing: signature expired")
	ErrSignatureInvalid   = problem.New(problem.Unauthorized, "signature_invalid", "signing: signature invalid")
)

// VerifyPC checks a PC-scheme header against the raw body at the verifier's time now. The rules
// are package webhook's, the one implementation of the scheme that receivers import too; this maps
// its errors onto the sentinels above, which the Integration API answers with its own codes.
func VerifyPC(secret []byte, header string, body []byte, now time.Time) error {
	return fromWebhook(webhook.Verify(string(secret), header, body, now))
}

// fromWebhook maps the scheme's errors onto the sentinels, each with the detail the sender is shown:
// a malformed header keeps its reason; the other kinds carry nothing the sender can use beyond what
// to fix.
func fromWebhook(err error) error {
	var he *webhook.HeaderError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, webhook.ErrMissingHeader):
		return missing()
	case errors.As(err, &he):
		return malformed(he.Reason)
	case errors.Is(err, webhook.ErrOutsideTolerance):
		return problem.Fail(ErrSignatureExpired, "the signature timestamp is more than %d seconds from the server clock",
			int(webhook.Tolerance.Seconds()))
	case errors.Is(err, webhook.ErrBadSignature):
		return invalid()
	}
	return err
}

// SignPC returns the header value `t=<t>,v1=<lowercase hex>` for body signed at Unix time t.
// t must be non-negative (a real clock reading): the verifier rejects a sign on t.
func SignPC(secret []byte, t int64, body []byte) string {
	return webhook.Sign(string(secret), time.Unix(t, 0), body)
}

// The failures with their details, the one place a signature error gets the words its answer shows.
func missing() error { return problem.Fail(ErrSignatureMissing, "this key requires a signed request") }
func invalid() error {
	return problem.Fail(ErrSignatureInvalid, "the signature does not match the body")
}
func malformed(reason string) error {
	return problem.Fail(ErrSignatureMalformed, "%s: %s", ErrSignatureMalformed, reason)
}

// nativestoreLen is the length of standard padded base64 of a SHA-256 HMAC.
var nativestoreLen = base64.StdEncoding.EncodedLen(sha256.Size)

// VerifyNativestore checks an X-Store-Webhook-Signature value against the raw body. The value
// must be the one canonical encoding (exact length, strict padding bits), so comparing the decoded
// bytes is the same as the case-sensitive string comparison the platform specifies, while still
// telling a garbled header (malformed) from a wrong one (invalid).
func VerifyNativestore(secret []byte, header string, body []byte) error {
	if strings.TrimSpace(header) == "" {
		return missing()
	}
	if len(header) != nativestoreLen {
		return malformed("not base64 of 32 bytes")
	}
	got, err := base64.StdEncoding.Strict().DecodeString(header)
	if err != nil || len(got) != sha256.Size {
		return malformed("not base64 of 32 bytes")
	}
	if !hmac.Equal(got, macNativestore(secret, body)) {
		return invalid()
	}
	return nil
}

func macNativestore(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}
