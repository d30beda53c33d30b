package webhook_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"wds/webhook"
)

const (
	sigA = "4b10f0f2b5c34952e5bc964bda946be29dbff99cce08995c81b11530d0780639" // vectors[0]
	sigB = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
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

		{"empty", "", webhook.ErrMissingHeader, 0, 0},
		{"only whitespace", "  \t ", webhook.ErrMissingHeader, 0, 0},

		{"garbage", "garbage", webhook.ErrMalformedHeader, 0, 0},
		{"missing t", "v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"missing v1", "t=5", webhook.ErrMalformedHeader, 0, 0},
		{"only v0", "t=5,v0=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"duplicate t", "t=5,t=5,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"empty t", "t=,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"negative t", "t=-5,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"plus t", "t=+5,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"leading zero t", "t=05,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"fractional t", "t=5.0,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"hex t", "t=0x5,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"t overflows int64", "t=9223372036854775808,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"space inside t", "t= 5,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"v1 short", "t=5,v1=" + sigA[:62], webhook.ErrMalformedHeader, 0, 0},
		{"v1 long", "t=5,v1=" + sigA + "00", webhook.ErrMalformedHeader, 0, 0},
		{"v1 not hex", "t=5,v1=" + strings.Repeat("g", 64), webhook.ErrMalformedHeader, 0, 0},
		{"v1 empty", "t=5,v1=", webhook.ErrMalformedHeader, 0, 0},
		{"one bad v1 among good", "t=5,v1=" + sigA + ",v1=xyz", webhook.ErrMalformedHeader, 0, 0},
		{"empty element", "t=5,,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"trailing comma", "t=5,v1=" + sigA + ",", webhook.ErrMalformedHeader, 0, 0},
		{"no equals", "t=5,v1=" + sigA + ",flag", webhook.ErrMalformedHeader, 0, 0},
		{"empty key", "t=5,=x,v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"semicolons", "t=5;v1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
		{"upper-case keys are unknown", "T=5,V1=" + sigA, webhook.ErrMalformedHeader, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := webhook.ParseHeader(tt.value)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("ParseHeader(%q) error = %v, want %v", tt.value, err, tt.wantErr)
			}
			var he *webhook.HeaderError
			if errors.Is(err, webhook.ErrMalformedHeader) != errors.As(err, &he) {
				t.Fatalf("malformed error %v is not a *HeaderError", err)
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

func TestVerify(t *testing.T) {
	v := vectors[0]
	body, signedAt := []byte(v.body), time.Unix(v.t, 0)
	wrong := "t=1700000000,v1=" + sigB
	tests := []struct {
		name    string
		secret  string
		header  string
		now     time.Time
		wantErr error
	}{
		{"known answer", v.secret, v.header, signedAt, nil},
		{"uppercase hex", v.secret, "t=1700000000,v1=" + strings.ToUpper(sigA), signedAt, nil},
		{"match in second v1 (rotation)", v.secret, wrong + ",v1=" + sigA, signedAt, nil},
		{"match in first v1", v.secret, v.header + ",v1=" + sigB, signedAt, nil},
		{"with v0 and whitespace", v.secret, " v0=abc , " + v.header + " ", signedAt, nil},
		{"now 300s after t", v.secret, v.header, signedAt.Add(webhook.Tolerance), nil},
		{"now 300s before t", v.secret, v.header, signedAt.Add(-webhook.Tolerance), nil},
		{"now 300s+1ns after t", v.secret, v.header, signedAt.Add(webhook.Tolerance + 1), webhook.ErrTooOld},
		{"now 300s+1ns before t", v.secret, v.header, signedAt.Add(-webhook.Tolerance - 1), webhook.ErrTooNew},
		{"now 301s after t", v.secret, v.header, signedAt.Add(301 * time.Second), webhook.ErrTooOld},
		{"now 301s before t", v.secret, v.header, signedAt.Add(-301 * time.Second), webhook.ErrTooNew},
		{"stale beats bad signature", v.secret, wrong, signedAt.Add(time.Hour), webhook.ErrTooOld},
		{"t far in the future", v.secret, "t=9223372036854775807,v1=" + sigA, signedAt, webhook.ErrTooNew},
		{"t zero", v.secret, "t=0,v1=" + sigA, signedAt, webhook.ErrTooOld},
		{"wrong v1", v.secret, wrong, signedAt, webhook.ErrBadSignature},
		{"wrong secret", v.secret + "x", v.header, signedAt, webhook.ErrBadSignature},
		{"other t, same v1", v.secret, "t=1700000001,v1=" + sigA, signedAt, webhook.ErrBadSignature},
		{"missing", v.secret, "", signedAt, webhook.ErrMissingHeader},
		{"malformed", v.secret, "t=1700000000", signedAt, webhook.ErrMalformedHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.Verify(tt.secret, tt.header, body, tt.now)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("Verify error = %v, want %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), v.secret) {
				t.Fatalf("error %q leaks the secret", err)
			}
		})
	}
}

// A signature that verifies stops verifying when any byte of the body changes: the MAC covers
// the raw bytes, not a re-serialisation.
func TestBodyByteChangeBreaksSignature(t *testing.T) {
	v := vectors[2]
	now := time.Unix(v.t, 0)
	for i := range len(v.body) {
		changed := []byte(v.body)
		changed[i] ^= 0x01
		if err := webhook.Verify(v.secret, v.header, changed, now); !errors.Is(err, webhook.ErrBadSignature) {
			t.Fatalf("byte %d changed: error = %v, want ErrBadSignature", i, err)
		}
	}
}

// The timestamp errors carry what a receiver needs to see whose clock is wrong, and match both
// their own sentinel and ErrOutsideTolerance.
func TestTimestampError(t *testing.T) {
	v := vectors[0]
	for _, c := range []struct {
		now  time.Time
		want error
		msg  string
	}{
		{time.Unix(v.t+3600, 0), webhook.ErrTooOld, "webhook: X-PC-Signature t=1700000000 is more than 300 s before the receiver's clock (1700003600)"},
		{time.Unix(v.t-3600, 0), webhook.ErrTooNew, "webhook: X-PC-Signature t=1700000000 is more than 300 s after the receiver's clock (1699996400)"},
	} {
		err := webhook.Verify(v.secret, v.header, []byte(v.body), c.now)
		var te *webhook.TimestampError
		if !errors.As(err, &te) || te.Timestamp != v.t || !te.Now.Equal(c.now) {
			t.Fatalf("error %v is not a TimestampError for t=%d at %v", err, v.t, c.now)
		}
		if !errors.Is(err, c.want) || !errors.Is(err, webhook.ErrOutsideTolerance) || err.Error() != c.msg {
			t.Errorf("error %q: want it to match %v and ErrOutsideTolerance, with message %q", err, c.want, c.msg)
		}
	}
	if errors.Is(webhook.ErrTooOld, webhook.ErrTooNew) || errors.Is(webhook.ErrTooNew, webhook.ErrTooOld) {
		t.Error("ErrTooOld and ErrTooNew match each other")
	}
}

func TestParse(t *testing.T) {
	v := vectors[1]
	now := time.Unix(v.t, 0)
	ev, err := webhook.Parse(v.secret, v.header, []byte(v.body), now)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != nil || ev.Type != "webhook.test" || ev.OrgID != "5b0e7c1a-2f3d-4c8e-9a6b-0d1e2f3a4b5c" ||
		ev.StoreID != nil || !ev.CreatedAt.Equal(time.Unix(v.t, 0)) || ev.Summarized {
		t.Errorf("event = %+v", ev)
	}
	var data struct {
		EndpointID string `json:"endpoint_id"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.EndpointID != "94d0c1b2-3a4e-4f5a-8b6c-7d8e9f0a1b2c" {
		t.Errorf("data = %s (%v)", ev.Data, err)
	}

	summary := []byte(`{"id":"e1","type":"order.created","created_at":"2026-11-25T07:30:00Z","org_id":"o","store_id":"s",` +
		`"summarized":true,"data":{"id":"r1"},"detail":"over the cap"}`)
	ev, err = webhook.Parse("k", webhook.Sign("k", now, summary), summary, now)
	if err != nil || *ev.ID != "e1" || *ev.StoreID != "s" || !ev.Summarized || ev.Detail != "over the cap" || string(ev.Data) != `{"id":"r1"}` {
		t.Errorf("summarized event = %+v, %v", ev, err)
	}

	if ev, err := webhook.Parse(v.secret, v.header, []byte(v.body+" "), now); ev != nil || !errors.Is(err, webhook.ErrBadSignature) {
		t.Errorf("tampered body: %+v, %v", ev, err)
	}
	notJSON := []byte("not json")
	if _, err := webhook.Parse("k", webhook.Sign("k", now, notJSON), notJSON, now); err == nil || !strings.HasPrefix(err.Error(), "webhook: decode event body: ") {
		t.Errorf("signed non-JSON body: error = %v", err)
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{
		"", " ", vectors[0].header, "t=1,v1=" + sigA + ",v1=" + sigB, "t=1,t=2,v1=" + sigA,
		"v1=" + sigA, "t=1", "t=-1,v1=" + sigA, "t=01,v1=" + sigA, ",", "=", "t=,v1=",
		"t=99999999999999999999,v1=" + sigA, "t=1,v0=x,v1=" + strings.ToUpper(sigB),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		h, err := webhook.ParseHeader(value)
		if err != nil {
			if !errors.Is(err, webhook.ErrMissingHeader) && !errors.Is(err, webhook.ErrMalformedHeader) {
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

func FuzzVerify(f *testing.F) {
	for _, v := range vectors {
		f.Add(v.secret, v.header, []byte(v.body), v.t, int64(0))
	}
	f.Add("", "", []byte(""), int64(0), int64(0))
	f.Add("k", "t=9223372036854775807,v1="+sigB, []byte("x"), int64(-1), int64(1))
	f.Add("k", "garbage", []byte{0xff, 0}, int64(1<<62), int64(-301))
	f.Fuzz(func(t *testing.T, secret, header string, body []byte, ts, skew int64) {
		if err := webhook.Verify(secret, header, body, time.Unix(ts, 0)); err != nil && !isVerifyErr(err) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if ts < 0 || ts > 1<<40 || skew < -1<<20 || skew > 1<<20 {
			return // Sign documents t >= 1970; keep now's arithmetic far from overflow
		}
		signed, now := webhook.Sign(secret, time.Unix(ts, 0), body), time.Unix(ts+skew, 0)
		err := webhook.Verify(secret, signed, body, now)
		switch {
		case skew > 300 && !errors.Is(err, webhook.ErrTooOld), skew < -300 && !errors.Is(err, webhook.ErrTooNew):
			t.Fatalf("skew %d: error = %v", skew, err)
		case skew >= -300 && skew <= 300 && err != nil:
			t.Fatalf("own signature %q does not verify at skew %d: %v", signed, skew, err)
		}
		if len(body) > 0 && err == nil {
			changed := bytes.Clone(body)
			changed[0] ^= 0x80
			if err := webhook.Verify(secret, signed, changed, now); !errors.Is(err, webhook.ErrBadSignature) {
				t.Fatalf("changed body: error = %v, want ErrBadSignature", err)
			}
		}
	})
}

// Whatever a verified body holds, Parse answers an Event or an error, never both, never a panic.
func FuzzParse(f *testing.F) {
	for _, v := range vectors {
		f.Add([]byte(v.body))
	}
	f.Add([]byte(`{"id":1}`))
	f.Add([]byte(`{"created_at":"yesterday"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		now := time.Unix(1700000000, 0)
		ev, err := webhook.Parse("k", webhook.Sign("k", now, body), body, now)
		if (ev == nil) == (err == nil) {
			t.Fatalf("Parse(%q) = %+v, %v", body, ev, err)
		}
	})
}

func isVerifyErr(err error) bool {
	for _, target := range []error{webhook.ErrMissingHeader, webhook.ErrMalformedHeader, webhook.ErrOutsideTolerance, webhook.ErrBadSignature} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// wds encodes delivered bodies with Event itself: decoding a body and encoding it again gives the
// same bytes, fields in the wire's order, created_at as sent, the summary's members only on a summary.
func TestEventEncodesTheWireBytes(t *testing.T) {
	for _, body := range []string{
		vectors[1].body,
		`{"id":"e1","type":"order.created","created_at":"2026-11-25T07:30:00.123456Z","org_id":"o","store_id":"s",` +
			`"summarized":true,"data":{"id":"r1"},"detail":"over the cap"}`,
	} {
		var ev webhook.Event
		if err := json.Unmarshal([]byte(body), &ev); err != nil {
			t.Fatal(err)
		}
		if out, err := json.Marshal(ev); err != nil || string(out) != body {
			t.Errorf("encoded again:\n%s (%v)\nwant\n%s", out, err, body)
		}
	}
}
