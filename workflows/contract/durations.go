package contract

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Durations is a retry schedule as the Temporal UI shows it in a workflow's input: ["5s","10s"], not
// [5000000000,10000000000]. It is a field of its own (RetrySchedule) rather than a new form of
// Schedule: a worker of an older wds reads Schedule as nanoseconds and would fail a workflow whose
// Schedule it cannot decode, while one that finds no Schedule stops on its first workflow task
// (a panic, which Temporal retries) until a worker of this release takes the task.
type Durations []time.Duration

// MarshalJSON writes each duration as Go writes it ("1m0s", "2h0m0s"). By hand: workflow code
// imports no encoding/json (workflows/determinism_test.go), and the strings need no escaping.
func (d Durations) MarshalJSON() ([]byte, error) {
	out := make([]string, len(d))
	for i, v := range d {
		out[i] = strconv.Quote(v.String())
	}
	return []byte("[" + strings.Join(out, ",") + "]"), nil
}

// UnmarshalJSON reads a JSON array of durations as strings, or as nanoseconds.
func (d *Durations) UnmarshalJSON(b []byte) error {
	text := strings.TrimSpace(string(b))
	if text == "null" {
		*d = nil
		return nil
	}
	inner, ok := strings.CutPrefix(text, "[")
	if inner, ok = strings.CutSuffix(inner, "]"); !ok {
		return fmt.Errorf("retry schedule: %s is not an array", text)
	}
	out := Durations{}
	if strings.TrimSpace(inner) == "" {
		*d = out
		return nil
	}
	for _, item := range strings.Split(inner, ",") {
		v, err := parseDuration(strings.TrimSpace(item))
		if err != nil {
			return fmt.Errorf("retry schedule: %w", err)
		}
		out = append(out, v)
	}
	*d = out
	return nil
}

// parseDuration reads one JSON value: a string such as "5s", or a number of nanoseconds.
func parseDuration(item string) (time.Duration, error) {
	if s, err := strconv.Unquote(item); err == nil && strings.HasPrefix(item, `"`) {
		return time.ParseDuration(s)
	}
	ns, err := strconv.ParseInt(item, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is neither a duration nor nanoseconds", item)
	}
	return time.Duration(ns), nil
}

// ladder is the schedule of a workflow's input: RetrySchedule, or Schedule in an older one's.
func ladder(schedule Durations, legacy []time.Duration) []time.Duration {
	if len(schedule) > 0 {
		return schedule
	}
	return legacy
}
