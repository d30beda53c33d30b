package webhook_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"wds/webhook"
)

// Secrets of both forms decode to their 32 bytes: standard padded base64 (made now) and unpadded
// base64url (made before); anything else is refused, so it never keys a signature by accident.
func TestStandardKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xfb, 0xff, 0x3e}, 11)[:32] // bytes whose base64 has + / and - _
	for _, secret := range []string{"whsec_" + base64.StdEncoding.EncodeToString(raw), "whsec_" + base64.RawURLEncoding.EncodeToString(raw)} {
		if key, err := webhook.StandardKey(secret); err != nil || !bytes.Equal(key, raw) {
			t.Errorf("StandardKey(%q) = %x, %v", secret, key, err)
		}
	}
	for _, secret := range []string{"", "whsec_", "sk_" + base64.StdEncoding.EncodeToString(raw), "whsec_not base64!"} {
		if _, err := webhook.StandardKey(secret); err == nil {
			t.Errorf("StandardKey(%q) accepted", secret)
		}
	}
}

func TestVerifyStandard(t *testing.T) {
	v := vectors[3]
	body, ts, at := []byte(v.body), strconv.FormatInt(v.t, 10), time.Unix(v.t, 0)
	other := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	rotated, err := webhook.SignStandard(v.id, at, body, other, v.secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, secret, id, ts, sig string
		body                      []byte
		now                       time.Time
		want                      error
	}{
		{"the vector", v.secret, v.id, ts, v.standard, body, at, nil},
		{"300 s later", v.secret, v.id, ts, v.standard, body, at.Add(300 * time.Second), nil},
		{"a rotation: the second v1 matches", v.secret, v.id, ts, rotated, body, at, nil},
		{"another scheme beside v1 is ignored", v.secret, v.id, ts, "v1a,abc " + v.standard, body, at, nil},
		{"another secret", other, v.id, ts, v.standard, body, at, webhook.ErrBadSignature},
		{"another id", v.secret, v.id + "x", ts, v.standard, body, at, webhook.ErrBadSignature},
		{"a tampered body", v.secret, v.id, ts, v.standard, append(bytes.Clone(body), ' '), at, webhook.ErrBadSignature},
		{"301 s old", v.secret, v.id, ts, v.standard, body, at.Add(301 * time.Second), webhook.ErrTooOld},
		{"301 s early", v.secret, v.id, ts, v.standard, body, at.Add(-301 * time.Second), webhook.ErrTooNew},
		{"no id", v.secret, "", ts, v.standard, body, at, webhook.ErrMissingHeader},
		{"no signature", v.secret, v.id, ts, " ", body, at, webhook.ErrMissingHeader},
		{"a signed timestamp", v.secret, v.id, "+" + ts, v.standard, body, at, webhook.ErrMalformedHeader},
		{"no v1", v.secret, v.id, ts, "v1a,abc", body, at, webhook.ErrMalformedHeader},
		{"a v1 that is not base64 of 32 bytes", v.secret, v.id, ts, "v1,AAAA", body, at, webhook.ErrMalformedHeader},
		{"an element without a comma", v.secret, v.id, ts, "v1", body, at, webhook.ErrMalformedHeader},
	} {
		err := webhook.VerifyStandard(c.secret, c.id, c.ts, c.sig, c.body, c.now)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		// A message names the Standard Webhooks header at fault, not X-PC-Signature.
		if err != nil && !errors.Is(err, webhook.ErrBadSignature) && !strings.Contains(err.Error(), "webhook-") {
			t.Errorf("%s: %q does not name the header", c.name, err)
		}
	}
}

// VerifyHeaders takes X-PC-Signature when there is one, whatever the Standard Webhooks headers say,
// and the Standard Webhooks headers otherwise.
func TestVerifyHeadersTakesEitherScheme(t *testing.T) {
	v := vectors[3]
	ts, at := strconv.FormatInt(v.t, 10), time.Unix(v.t, 0)
	standard := http.Header{"Webhook-Id": {v.id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {v.standard}}
	if err := webhook.VerifyHeaders(v.secret, standard, []byte(v.body), at); err != nil {
		t.Errorf("the Standard Webhooks headers alone: %v", err)
	}
	bad := standard.Clone()
	bad.Set(webhook.HeaderSignature, "t="+ts+",v1="+sigA) // another body's
	if err := webhook.VerifyHeaders(v.secret, bad, []byte(v.body), at); !errors.Is(err, webhook.ErrBadSignature) {
		t.Errorf("a wrong X-PC-Signature beside good Standard Webhooks headers: %v", err)
	}
	if err := webhook.VerifyHeaders(v.secret, http.Header{}, []byte(v.body), at); !errors.Is(err, webhook.ErrMissingHeader) {
		t.Errorf("no headers: %v", err)
	}
	if _, err := webhook.ParseHeaders(v.secret, standard, []byte(v.body+" "), at); !errors.Is(err, webhook.ErrBadSignature) {
		t.Errorf("ParseHeaders of a tampered body: %v", err)
	}
}

func FuzzVerifyStandard(f *testing.F) {
	for _, v := range vectors {
		f.Add(v.secret, v.id, strconv.FormatInt(v.t, 10), v.standard, []byte(v.body), v.t)
	}
	f.Add("", "", "", "", []byte{}, int64(0))
	f.Add("whsec_x", "i", "01", "v1, v1,,", []byte("x"), int64(1))
	f.Add("whsec_AAAA", "i", "99999999999999999999", "v1,"+base64.StdEncoding.EncodeToString(make([]byte, 32)), []byte{0xff}, int64(-1))
	f.Fuzz(func(t *testing.T, secret, id, ts, sig string, body []byte, now int64) {
		if err := webhook.VerifyStandard(secret, id, ts, sig, body, time.Unix(now, 0)); err != nil && !isVerifyErr(err) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if _, err := webhook.StandardKey(secret); err != nil || strings.TrimSpace(id) == "" || now < 0 || now > 1<<40 {
			return
		}
		signed, err := webhook.SignStandard(id, time.Unix(now, 0), body, secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := webhook.VerifyStandard(secret, id, strconv.FormatInt(now, 10), signed, body, time.Unix(now, 0)); err != nil {
			t.Fatalf("own signature %q does not verify: %v", signed, err)
		}
	})
}
