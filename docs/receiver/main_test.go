package main

import (
	"bytes"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"wds/api/signing"
	"wds/webhook"
)

// The documented receiver accepts exactly what wds signs, once per event id, and nothing else.
func TestReceiverAcceptsWhatWdsSigns(t *testing.T) {
	var logged bytes.Buffer
	prev := log.Writer()
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(prev) })
	secret, body, now := "whsec_example", `{"id":"e1","type":"order.created"}`, time.Now()
	sign := func(secret string, at time.Time) string {
		return signing.SignPC([]byte(secret), at.Unix(), []byte(body))
	}
	rc := &receiver{secret: secret, seen: map[string]bool{}}
	post := func(rc *receiver, header, body string) int {
		req := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(body))
		req.Header.Set(webhook.HeaderSignature, header)
		req.Header.Set(webhook.HeaderEventID, "e1")
		rec := httptest.NewRecorder()
		rc.ServeHTTP(rec, req)
		return rec.Code
	}

	for i, wantDup := range []string{"duplicate=false", "duplicate=true"} {
		if code := post(rc, sign(secret, now), body); code != http.StatusNoContent {
			t.Fatalf("delivery %d: status %d, want 204", i+1, code)
		}
		if !strings.Contains(logged.String(), wantDup) {
			t.Fatalf("delivery %d: log %q lacks %s", i+1, logged.String(), wantDup)
		}
	}
	for name, c := range map[string]struct{ header, body string }{
		"other secret":    {sign("whsec_other", now), body},
		"changed body":    {sign(secret, now), `{"id":"e2"}`},
		"too old":         {sign(secret, now.Add(-301*time.Second)), body},
		"from the future": {sign(secret, now.Add(301*time.Second)), body},
		"malformed":       {"v1=abc", body},
		"missing":         {"", body},
	} {
		if code := post(rc, c.header, c.body); code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, code)
		}
	}
	failing := &receiver{secret: secret, fail: true, seen: map[string]bool{}}
	if code := post(failing, sign(secret, now), body); code != http.StatusInternalServerError {
		t.Errorf("FAIL=1: status %d, want 500", code)
	}
}
