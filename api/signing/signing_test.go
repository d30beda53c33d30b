package signing

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"wds/webhook"
)

const (
	sigA = "4b10f0f2b5c34952e5bc964bda946be29dbff99cce08995c81b11530d0780639"
	sigB = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
)

// Known answers computed outside Go with openssl, keyed by the secret string's bytes:
//
//	printf '%s' '1700000000.{"id":"o_1","total_cents":1250}' | openssl dgst -sha256 -hmac "$pcSecret"
//	printf '%s' "$nsBody" | openssl dgst -sha256 -binary -hmac "$nsSecret" | base64
const (
	pcSecret = "whsec_5Zx9cTq3Lr8yVb2NwPk4Hd7Jm1Ga6Fe0Su9Xo3Ri2Ty"
	pcBody   = `{"id":"o_1","total_cents":1250}`
	pcT      = 1700000000
	pcHeader = "t=1700000000,v1=" + sigA
	nsSecret = "nativestore-shared-secret"
	nsBody   = `{"id":42,"status":"processing"}`
	nsHeader = "OflSNE98ifzpEEkqVCMPmJxD0evqMwoK+7t2INBYc3g="
)

func TestVerifyPC(t *testing.T) {
	secret := []byte(pcSecret)
	body := []byte(pcBody)
	signedAt := time.Unix(pcT, 0)
	wrong := "t=1700000000,v1=" + sigB
	tests := []struct {
		name    string
		secret  string
		header  string
		now     time.Time
		wantErr error
	}{
		{"known answer", pcSecret, pcHeader, signedAt, nil},
		{"uppercase hex", pcSecret, "t=1700000000,v1=" + strings.ToUpper(sigA), signedAt, nil},
		{"match in second v1 (rotation)", pcSecret, wrong + ",v1=" + sigA, signedAt, nil},
		{"match in first v1", pcSecret, pcHeader + ",v1=" + sigB, signedAt, nil},
		{"with v0 and whitespace", pcSecret, " v0=abc , " + pcHeader + " ", signedAt, nil},
		{"now 300s after t", pcSecret, pcHeader, signedAt.Add(webhook.Tolerance), nil},
		{"now 300s before t", pcSecret, pcHeader, signedAt.Add(-webhook.Tolerance), nil},
		{"now 300s+1ns after t", pcSecret, pcHeader, signedAt.Add(webhook.Tolerance + 1), ErrSignatureExpired},
		{"now 300s+1ns before t", pcSecret, pcHeader, signedAt.Add(-webhook.Tolerance - 1), ErrSignatureExpired},
		{"now 301s after t", pcSecret, pcHeader, signedAt.Add(301 * time.Second), ErrSignatureExpired},
		{"now 301s before t", pcSecret, pcHeader, signedAt.Add(-301 * time.Second), ErrSignatureExpired},
		{"expired beats invalid", pcSecret, wrong, signedAt.Add(time.Hour), ErrSignatureExpired},
		{"t far in the future", pcSecret, "t=9223372036854775807,v1=" + sigA, signedAt, ErrSignatureExpired},
		{"t zero", pcSecret, "t=0,v1=" + sigA, signedAt, ErrSignatureExpired},
		{"wrong v1", pcSecret, wrong, signedAt, ErrSignatureInvalid},
		{"wrong secret", pcSecret + "x", pcHeader, signedAt, ErrSignatureInvalid},
		{"other t, same v1", pcSecret, "t=1700000001,v1=" + sigA, signedAt, ErrSignatureInvalid},
		{"missing", pcSecret, "", signedAt, ErrSignatureMissing},
		{"malformed", pcSecret, "t=1700000000", signedAt, ErrSignatureMalformed},
		{"malformed t", pcSecret, "t=-1,v1=" + sigA, signedAt, ErrSignatureMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyPC([]byte(tt.secret), tt.header, body, tt.now)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("VerifyPC error = %v, want %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), string(secret)) {
				t.Fatalf("error %q leaks the secret", err)
			}
		})
	}
}

// The Integration API shows a malformed header's error to the sender as its detail: it keeps the
// verifier's reason under this package's sentinel, and names no outbound header.
func TestVerifyPCMalformedDetail(t *testing.T) {
	err := VerifyPC([]byte(pcSecret), "t=1700000000", []byte(pcBody), time.Unix(pcT, 0))
	if want := "signing: signature malformed: missing v1"; err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestSignPC(t *testing.T) {
	if got := SignPC([]byte(pcSecret), pcT, []byte(pcBody)); got != pcHeader {
		t.Fatalf("SignPC = %q, want %q", got, pcHeader)
	}
	body := []byte("{}")
	h := SignPC([]byte("s"), 42, body)
	if err := VerifyPC([]byte("s"), h, body, time.Unix(42, 999_999_999)); err != nil {
		t.Fatalf("VerifyPC(SignPC) = %v", err)
	}
}

func TestVerifyNativestore(t *testing.T) {
	body := []byte(nsBody)
	flipCase := strings.ToLower(nsHeader[:1]) + nsHeader[1:]
	tests := []struct {
		name    string
		secret  string
		header  string
		wantErr error
	}{
		{"known answer", nsSecret, nsHeader, nil},
		{"case changed", nsSecret, flipCase, ErrSignatureInvalid},
		{"wrong secret", nsSecret + "x", nsHeader, ErrSignatureInvalid},
		{"other valid signature", nsSecret, signNativestore([]byte("x"), body), ErrSignatureInvalid},
		{"missing", nsSecret, "", ErrSignatureMissing},
		{"only whitespace", nsSecret, "  ", ErrSignatureMissing},
		{"hex instead of base64", nsSecret, sigA, ErrSignatureMalformed},
		{"no padding", nsSecret, strings.TrimRight(nsHeader, "="), ErrSignatureMalformed},
		{"url alphabet", nsSecret, strings.NewReplacer("+", "-", "/", "_").Replace(nsHeader), ErrSignatureMalformed},
		{"non-canonical last char", nsSecret, nsHeader[:42] + "5=", ErrSignatureMalformed},
		{"surrounding spaces", nsSecret, " " + nsHeader + " ", ErrSignatureMalformed},
		{"16 bytes", nsSecret, "AAAAAAAAAAAAAAAAAAAAAA==", ErrSignatureMalformed},
		{"PC header", nsSecret, pcHeader, ErrSignatureMalformed},
		{"garbage", nsSecret, "garbage!", ErrSignatureMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyNativestore([]byte(tt.secret), tt.header, body)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("VerifyNativestore error = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestSignNativestore(t *testing.T) {
	if got := signNativestore([]byte(nsSecret), []byte(nsBody)); got != nsHeader {
		t.Fatalf("SignNativestore = %q, want %q", got, nsHeader)
	}
}

// A signature that verifies must stop verifying when any single byte of the body changes: the
// MAC covers the raw bytes, not a re-serialisation.
func TestBodyByteChangeBreaksSignature(t *testing.T) {
	secret := []byte(pcSecret)
	body := []byte(pcBody)
	now := time.Unix(pcT, 0)
	pc := SignPC(secret, pcT, body)
	ns := signNativestore(secret, body)
	for i := range body {
		changed := bytes.Clone(body)
		changed[i] ^= 0x01
		if err := VerifyPC(secret, pc, changed, now); !errors.Is(err, ErrSignatureInvalid) {
			t.Fatalf("PC: byte %d changed, error = %v, want invalid", i, err)
		}
		if err := VerifyNativestore(secret, ns, changed); !errors.Is(err, ErrSignatureInvalid) {
			t.Fatalf("nativestore: byte %d changed, error = %v, want invalid", i, err)
		}
	}
	for _, changed := range [][]byte{body[:len(body)-1], append(bytes.Clone(body), ' ')} {
		if err := VerifyPC(secret, pc, changed, now); !errors.Is(err, ErrSignatureInvalid) {
			t.Fatalf("PC: length changed, error = %v, want invalid", err)
		}
		if err := VerifyNativestore(secret, ns, changed); !errors.Is(err, ErrSignatureInvalid) {
			t.Fatalf("nativestore: length changed, error = %v, want invalid", err)
		}
	}
}

func FuzzVerifyPC(f *testing.F) {
	f.Add([]byte(pcSecret), pcHeader, []byte(pcBody), int64(pcT))
	f.Add([]byte(""), "", []byte(""), int64(0))
	f.Add([]byte("k"), "t=9223372036854775807,v1="+sigB, []byte("x"), int64(-1))
	f.Add([]byte("k"), "garbage", []byte{0xff, 0}, int64(1<<62))
	f.Fuzz(func(t *testing.T, secret []byte, header string, body []byte, ts int64) {
		err := VerifyPC(secret, header, body, time.Unix(ts, 0))
		if err != nil && !isSignatureErr(err) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if ts < 0 {
			return // SignPC documents t >= 0
		}
		signed := SignPC(secret, ts, body)
		if err := VerifyPC(secret, signed, body, time.Unix(ts, 0)); err != nil {
			t.Fatalf("own signature %q does not verify: %v", signed, err)
		}
		if len(body) > 0 {
			changed := bytes.Clone(body)
			changed[0] ^= 0x80
			if err := VerifyPC(secret, signed, changed, time.Unix(ts, 0)); !errors.Is(err, ErrSignatureInvalid) {
				t.Fatalf("changed body: error = %v, want invalid", err)
			}
		}
	})
}

func FuzzVerifyNativestore(f *testing.F) {
	f.Add([]byte(nsSecret), nsHeader, []byte(nsBody))
	f.Add([]byte(""), "", []byte(""))
	f.Add([]byte("k"), "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", []byte("x"))
	f.Add([]byte("k"), "\n\r====", []byte{0})
	f.Fuzz(func(t *testing.T, secret []byte, header string, body []byte) {
		if err := VerifyNativestore(secret, header, body); err != nil && !isSignatureErr(err) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		signed := signNativestore(secret, body)
		if err := VerifyNativestore(secret, signed, body); err != nil {
			t.Fatalf("own signature %q does not verify: %v", signed, err)
		}
		if len(body) > 0 {
			changed := bytes.Clone(body)
			changed[len(changed)-1] ^= 0x01
			if err := VerifyNativestore(secret, signed, changed); !errors.Is(err, ErrSignatureInvalid) {
				t.Fatalf("changed body: error = %v, want invalid", err)
			}
		}
	})
}

func isSignatureErr(err error) bool {
	for _, target := range []error{ErrSignatureMissing, ErrSignatureMalformed, ErrSignatureExpired, ErrSignatureInvalid} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// signNativestore is the X-Store-Webhook-Signature value the store platform sends for body.
func signNativestore(secret, body []byte) string {
	return base64.StdEncoding.EncodeToString(macNativestore(secret, body))
}
