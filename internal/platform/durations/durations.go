// Package durations writes a length of time as people write it: "90 days", "24 hours", "5
// seconds", not Go's "2160h0m0s". Configuration and flags still take Go's form ("2160h"); this is
// for what the service says back, in CLI output and error details.
package durations

import (
	"strconv"
	"time"
)

// units are the units a length is written in, largest first.
var units = []struct {
	size      time.Duration
	one, many string
}{
	{24 * time.Hour, "day", "days"}, {time.Hour, "hour", "hours"}, {time.Minute, "minute", "minutes"},
	{time.Second, "second", "seconds"}, {time.Millisecond, "millisecond", "milliseconds"},
}

// Text is d in the largest unit that counts it whole ("90 days", "36 hours", "1 minute"); a length
// no unit counts whole, or none at all, keeps Go's form ("1.5µs", "0s").
func Text(d time.Duration) string {
	for _, u := range units {
		if d >= u.size && d%u.size == 0 {
			n := int64(d / u.size)
			if n == 1 {
				return "1 " + u.one
			}
			return strconv.FormatInt(n, 10) + " " + u.many
		}
	}
	return d.String()
}
