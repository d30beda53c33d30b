package contract

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// The Temporal UI shows a workflow's input as JSON: the retry schedule reads as durations, and the
// input of a workflow started before it did still gives its schedule.
func TestTheRetryScheduleReadsAsDurations(t *testing.T) {
	ladder := []time.Duration{5 * time.Second, 10 * time.Second, time.Hour}
	b, err := json.Marshal(EventParams{EventType: "order.created", RetrySchedule: ladder})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"RetrySchedule":["5s","10s","1h0m0s"]`) || strings.Contains(string(b), `"Schedule"`) {
		t.Fatalf("input %s", b)
	}
	for _, input := range []string{string(b), `{"Schedule":[5000000000,10000000000,3600000000000]}`,
		`{"RetrySchedule":[5000000000,"10s","1h"]}`} {
		var p RefireParams
		if err := json.Unmarshal([]byte(input), &p); err != nil {
			t.Fatalf("%s: %v", input, err)
		}
		if !slices.Equal(p.Ladder(), ladder) {
			t.Errorf("%s: ladder %v, want %v", input, p.Ladder(), ladder)
		}
	}
	var p EventParams
	if err := json.Unmarshal([]byte(`{"RetrySchedule":["soon"]}`), &p); err == nil {
		t.Error(`"soon" read as a duration`)
	}
}
