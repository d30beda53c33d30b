package main

import (
	"testing"
	"time"

	"wds/signing"
)

// The documented receiver accepts exactly what wds signs.
func TestVerifyAcceptsWhatWdsSigns(t *testing.T) {
	secret, body, now := []byte("whsec_example"), []byte(`{"id":"e1","type":"order.created"}`), time.Now()
	header := signing.SignPC(secret, now.Unix(), body)
	if err := verify(secret, header, body, now); err != nil {
		t.Fatalf("valid signature rejected: %v", err)
	}
	for name, c := range map[string]struct {
		secret []byte
		body   []byte
		at     time.Time
	}{
		"other secret":    {[]byte("whsec_other"), body, now},
		"changed body":    {secret, []byte(`{"id":"e2"}`), now},
		"too old":         {secret, body, now.Add(301 * time.Second)},
		"from the future": {secret, body, now.Add(-301 * time.Second)},
	} {
		if err := verify(c.secret, header, c.body, c.at); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := verify(secret, "v1=abc", body, now); err == nil {
		t.Error("malformed header accepted")
	}
}
