package activities

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// An error cut to fit its column stays valid UTF-8 (PostgreSQL refuses anything else in text).
func TestTruncateNeverSplitsACharacter(t *testing.T) {
	s := strings.Repeat("é", 300) // two bytes each: an odd limit falls inside one
	for _, n := range []int{1, 499, 500, 599} {
		got := truncate(s, n)
		if !utf8.ValidString(got) || len(got) > n || len(got) < n-utf8.UTFMax {
			t.Errorf("truncate to %d: %d bytes, valid %v", n, len(got), utf8.ValidString(got))
		}
	}
	if got := truncate("short", 500); got != "short" {
		t.Errorf("short string changed: %q", got)
	}
}
