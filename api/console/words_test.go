package console

import (
	"strings"
	"testing"
	"time"

	"wds/internal/eventsearch"
	"wds/models"
)

// Every code a page shows has its words in enumWords, and none reads as a code: no underscores.
func TestEveryCodeAPageShowsHasWords(t *testing.T) {
	var codes []string
	for _, o := range eventsearch.Outcomes {
		codes = append(codes, string(o))
	}
	for _, s := range models.Recorded {
		codes = append(codes, string(s))
	}
	codes = append(codes, eventsearch.ChainOriginal, eventsearch.ChainRefire, eventsearch.ChainResend, eventsearch.ChainRecovery,
		models.RecoveryRunning, models.RecoveryCompleted, models.RecoveryCancelled, models.DisabledManual, models.DisabledFailing)
	for _, c := range codes {
		w, ok := enumWords[c]
		if !ok || strings.Contains(w, "_") {
			t.Errorf("%s reads %q", c, w)
		}
	}
	reason := models.DisabledFailing
	if got := words(&reason); got != "disabled for failing" {
		t.Errorf("a disabled reason reads %q", got)
	}
	if got := words("some_new_code"); got != "some new code" {
		t.Errorf("a code without words reads %q", got)
	}
}

// Every time the console writes says UTC, whatever the time's own zone.
func TestATimeSaysUTC(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	if got := stamp(time.Date(2026, 11, 26, 18, 15, 30, 0, tokyo)); got != "2026-11-26 09:15:30 UTC" {
		t.Errorf("stamp reads %q", got)
	}
}
