package signing

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
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

func TestParseHeader(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		wantErr error
		wantT   int64
		wantN   int // number of v1 values
	}{
		{"plain", "t=1700000000,v1=" + sigA, nil, 1700000000, 1},
		{"v1 first", "v1=" + sigA + ",t=1700000000", nil, 1700000000, 1},
		{"uppercase hex", "t=1,v1=" + strings.ToUpper(sigA), nil, 1, 1},
		{"mixed case hex", "t=1,v1=4B10f0F2" + sigA[8:], nil, 1, 1},
		{"whitespace around elements", " t=5 ,\tv1=" + sigA + " ", nil, 5, 1},
		{"multiple v1", "t=5,v1=" + sigA + ",v1=" + sigB, nil, 5, 2},
		{"unknown keys ignored", "t=5,v0=zz,v1=" + sigA + ",v2=", nil, 5, 1},
		{"t zero", "t=0,v1=" + sigA, nil, 0, 1},
		{"t max int64", "t=9223372036854775807,v1=" + sigA, nil, 9223372036854775807, 1},

		{"empty", "", ErrSignatureMissing, 0, 0},
		{"only whitespace", "  \t ", ErrSignatureMissing, 0, 0},

		{"garbage", "garbage", ErrSignatureMalformed, 0, 0},
		{"missing t", "v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"missing v1", "t=5", ErrSignatureMalformed, 0, 0},
		{"only v0", "t=5,v0=" + sigA, ErrSignatureMalformed, 0, 0},
		{"duplicate t", "t=5,t=5,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"empty t", "t=,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"negative t", "t=-5,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"plus t", "t=+5,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"leading zero t", "t=05,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"fractional t", "t=5.0,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"hex t", "t=0x5,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"t overflows int64", "t=9223372036854775808,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"space inside t", "t= 5,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"v1 short", "t=5,v1=" + sigA[:62], ErrSignatureMalformed, 0, 0},
		{"v1 long", "t=5,v1=" + sigA + "00", ErrSignatureMalformed, 0, 0},
		{"v1 not hex", "t=5,v1=" + strings.Repeat("g", 64), ErrSignatureMalformed, 0, 0},
		{"v1 empty", "t=5,v1=", ErrSignatureMalformed, 0, 0},
		{"one bad v1 among good", "t=5,v1=" + sigA + ",v1=xyz", ErrSignatureMalformed, 0, 0},
		{"empty element", "t=5,,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"trailing comma", "t=5,v1=" + sigA + ",", ErrSignatureMalformed, 0, 0},
		{"no equals", "t=5,v1=" + sigA + ",flag", ErrSignatureMalformed, 0, 0},
		{"empty key", "t=5,=x,v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"semicolons", "t=5;v1=" + sigA, ErrSignatureMalformed, 0, 0},
		{"upper-case keys are unknown", "T=5,V1=" + sigA, ErrSignatureMalformed, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHeader(tt.value)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("ParseHeader(%q) error = %v, want %v", tt.value, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if h.Timestamp != tt.wantT || len(h.Signatures) != tt.wantN {
				t.Fatalf("ParseHeader(%q) = t %d, %d sigs; want t %d, %d sigs",
					tt.value, h.Timestamp, len(h.Signatures), tt.wantT, tt.wantN)
			}
			for _, s := range h.Signatures {
				if len(s) != 32 {
					t.Fatalf("decoded v1 has %d bytes, want 32", len(s))
				}
			}
		})
	}
}

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
		{"now 300s after t", pcSecret, pcHeader, signedAt.Add(Tolerance), nil},
		{"now 300s before t", pcSecret, pcHeader, signedAt.Add(-Tolerance), nil},
		{"now 300s+1ns after t", pcSecret, pcHeader, signedAt.Add(Tolerance + 1), ErrSignatureExpired},
		{"now 300s+1ns before t", pcSecret, pcHeader, signedAt.Add(-Tolerance - 1), ErrSignatureExpired},
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
		{"other valid signature", nsSecret, SignNativestore([]byte("x"), body), ErrSignatureInvalid},
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
	if got := SignNativestore([]byte(nsSecret), []byte(nsBody)); got != nsHeader {
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
	ns := SignNativestore(secret, body)
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

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{
		"", " ", pcHeader, "t=1,v1=" + sigA + ",v1=" + sigB, "t=1,t=2,v1=" + sigA,
		"v1=" + sigA, "t=1", "t=-1,v1=" + sigA, "t=01,v1=" + sigA, ",", "=", "t=,v1=",
		"t=99999999999999999999,v1=" + sigA, "t=1,v0=x,v1=" + strings.ToUpper(sigB),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		h, err := ParseHeader(value)
		if err != nil {
			if !errors.Is(err, ErrSignatureMissing) && !errors.Is(err, ErrSignatureMalformed) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if h.Timestamp < 0 || len(h.Signatures) == 0 {
			t.Fatalf("accepted %q as t=%d with %d sigs", value, h.Timestamp, len(h.Signatures))
		}
		for _, s := range h.Signatures {
			if len(s) != 32 {
				t.Fatalf("accepted %q with a %d-byte v1", value, len(s))
			}
		}
	})
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
		signed := SignNativestore(secret, body)
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
