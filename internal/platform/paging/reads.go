// What the Operator API's and the console's lists of an org share: the query each takes and the
// pace of an org's reads, in turns shared by every list, delivery log and chart.

package paging

import (
	"time"

	"github.com/google/uuid"

	"wds/internal/platform/ratelimit"
)

// OrgQuery is what every list of an org takes: whose org, who asks (their role is checked), and the
// page.
type OrgQuery struct {
	OrgID   uuid.UUID
	ActorID uuid.UUID
	Limit   int
	Cursor  *Cursor
}

// DefaultReadRate is WDS_OPERATOR_READ_RATE's default: an org's list reads a second, per instance,
// a burst of as many at once. A console page makes up to five; a person never comes near it.
const DefaultReadRate = 20

// readQueue is the longest an org's read waits for its turn before it is refused.
const readQueue = 5 * time.Second

// NewReadPacer paces each org's list reads to perSecond (0: DefaultReadRate), one at a time, for
// every list of an org (keys, the audit log, the delivery logs and their charts): one org's members
// or scripts reading in a loop hold one database turn, never the turns another org's requests need.
func NewReadPacer(perSecond int) *ratelimit.Pacer {
	if perSecond <= 0 {
		perSecond = DefaultReadRate
	}
	return ratelimit.NewPacer(perSecond, readQueue, nil)
}

// ReadsPaced is what waits for an org's turn at its reads, as the 429 names it.
const ReadsPaced = "this org's reads of its lists, delivery log and charts"
