package eventsearch

import "wds/models"

// Outcome is how an event stands on the support desk, over each endpoint's latest chain for it
// (docs/support.md); a chain's own state is one of the first three.
type Outcome string

// Event outcomes.
const (
	OutcomeInProgress  Outcome = "in_progress"
	OutcomeDropped             = Outcome(models.StatusDropped)
	OutcomeSucceeded           = Outcome(models.StatusSucceeded)
	OutcomeNoEndpoints Outcome = "no_endpoints"
)

// Outcomes lists every event outcome, in the order the filters offer them.
var Outcomes = []Outcome{OutcomeInProgress, OutcomeDropped, OutcomeSucceeded, OutcomeNoEndpoints}
