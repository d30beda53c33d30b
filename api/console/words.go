// How the console writes what the APIs answer as codes: every time in one format that says UTC, and
// every status, outcome and kind in words. The APIs and the CLI keep the codes (scripts read them);
// the pages keep them too where a script or a style keys on them (an option's value, a st-* class).

package console

import (
	"fmt"
	"strings"
	"time"

	"wds/internal/eventsearch"
	"wds/models"
)

// stamp is how the console writes a time, everywhere: UTC, to the second, saying so.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }

// enumWords are the words for each code a page shows: an attempt's status, an event's or chain's
// outcome, a chain's kind, a recovery's status, why an endpoint is disabled.
var enumWords = map[string]string{
	string(models.StatusSucceeded):         "succeeded",
	string(models.StatusFailed):            "failed",
	string(models.StatusDropped):           "dropped",
	string(eventsearch.OutcomeInProgress):  "in progress",
	string(eventsearch.OutcomeNoEndpoints): "no endpoint subscribed",
	"original":                             "original",
	models.DispatchRefire:                  "re-fire",
	models.DispatchResend:                  "resend",
	models.DispatchRecovery:                "recovery",
	models.RecoveryRunning:                 "running",
	models.RecoveryCompleted:               "completed",
	models.RecoveryCancelled:               "cancelled",
	models.DisabledManual:                  "disabled by an operator",
	models.DisabledFailing:                 "disabled for failing",
}

// words is a code as a person reads it. A code without words of its own (a new one) reads with
// spaces for its underscores rather than as a code.
func words(code any) string {
	s := fmt.Sprint(code)
	if p, ok := code.(*string); ok {
		if p == nil {
			return ""
		}
		s = *p
	}
	if w, ok := enumWords[s]; ok {
		return w
	}
	return strings.ReplaceAll(s, "_", " ")
}

// chainMeaning says what the console means by a chain, where a page first speaks of one.
const chainMeaning = "A chain is one event's delivery to one endpoint: its first attempt and the retries after it, " +
	"until one succeeds or the last fails and the chain is dropped. A re-fire, resend or recovery starts a new chain."
