package main

import (
	"regexp"
	"testing"
	"time"

	"wds/internal/platform/problem"
)

// A time flag that does not parse is answered with an example a reader can paste: in the past for
// the flags that look back (--since, --until, --shipped-at, --delivered-at), since a future --since
// is itself refused, and in the future for --expires-at.
func TestATimeFlagsExampleIsOnTheRightSideOfNow(t *testing.T) {
	example := regexp.MustCompile(`such as (\S+)`)
	for name, wantPast := range map[string]bool{
		"since": true, "until": true, "shipped-at": true, "delivered-at": true, "expires-at": false,
	} {
		_, err := optionalTime(name, "yesterday")
		if err == nil {
			t.Fatalf("--%s yesterday: no error", name)
		}
		detail := problem.Detail(err)
		m := example.FindStringSubmatch(detail)
		if m == nil {
			t.Fatalf("--%s: %q gives no example", name, detail)
		}
		at, err := time.Parse(time.RFC3339, m[1])
		if err != nil {
			t.Fatalf("--%s: the example %q is not RFC 3339: %v", name, m[1], err)
		}
		if past := at.Before(time.Now()); past != wantPast {
			t.Errorf("--%s: the example %s is on the wrong side of now (%q)", name, m[1], detail)
		}
		if at2, _ := optionalTime(name, m[1]); at2 == nil || !at2.Equal(at) {
			t.Errorf("--%s: the example %s is not accepted", name, m[1])
		}
	}
}
