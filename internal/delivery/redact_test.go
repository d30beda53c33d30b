package delivery

import (
	"strings"
	"testing"
)

func TestRedactReplacesEverySealedValue(t *testing.T) {
	custom := map[string]string{"Authorization": "Bearer s3cr3t/token+x", "X-Tenant": "acme"}
	keys := []string{"whsec_QUJDREVGR0hJSktMTU5PUA==", "whsec_b2xkc2VjcmV0b2xkc2VjcmV0"}
	for _, c := range []struct{ in, want string }{
		{"you sent Authorization: Bearer s3cr3t/token+x", "you sent Authorization: [redacted]"},
		{`{"headers":{"authorization":"Bearer s3cr3t\/token+x"}}`, `{"headers":{"authorization":"[redacted]"}}`},
		{`{"auth":"Bearer s3cr3t/token+x","tenant":"acme"}`, `{"auth":"[redacted]","tenant":"[redacted]"}`},
		{"q=Bearer+s3cr3t%2Ftoken%2Bx", "q=[redacted]"},
		{"secret whsec_QUJDREVGR0hJSktMTU5PUA== and key QUJDREVGR0hJSktMTU5PUA==", "secret [redacted] and key [redacted]"},
		{"old: whsec_b2xkc2VjcmV0b2xkc2VjcmV0", "old: [redacted]"},
		{"cut by the cap: Bearer s3cr3t/to", "cut by the cap: [redacted]"},
		{"nothing sealed here", "nothing sealed here"},
	} {
		if got := Redact(c.in, custom, keys); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRedactLeavesNoSealedValue(t *testing.T) {
	custom := map[string]string{"X-Api-Key": "k-1234567890"}
	echo := strings.Repeat("X-Api-Key: k-1234567890\n", 1000)
	if got := Redact(echo, custom, nil); strings.Contains(got, "1234567890") {
		t.Fatalf("a value is left: %.200s", got)
	}
}
