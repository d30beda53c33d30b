package durations_test

import (
	"testing"
	"time"

	"wds/internal/platform/durations"
)

func TestALengthReadsAsPeopleWriteIt(t *testing.T) {
	for d, want := range map[time.Duration]string{
		90 * 24 * time.Hour: "90 days", 7 * 24 * time.Hour: "7 days", 24 * time.Hour: "1 day", 36 * time.Hour: "36 hours",
		time.Hour: "1 hour", 90 * time.Minute: "90 minutes", 5 * time.Second: "5 seconds", 1500 * time.Millisecond: "1500 milliseconds",
		1500 * time.Nanosecond: "1.5µs", 0: "0s",
	} {
		if got := durations.Text(d); got != want {
			t.Errorf("Text(%s) = %q, want %q", d, got, want)
		}
	}
}
