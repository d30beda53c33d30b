package feed

import (
	"time"

	"github.com/google/uuid"
)

// SetClock replaces s's clock, for tests of expiry.
func SetClock(s *Service, now func() time.Time) { s.now = now }

// PageSQL is the statement of q's page starting after the iterator after ("" for the start).
func PageSQL(q Query, after string) (string, []any, error) {
	from := start
	if after != "" {
		var err error
		if from, err = parseIterator(after); err != nil {
			return "", nil, err
		}
	}
	sql, args := pageSQL(q, from)
	return sql, args, nil
}

// Iterator is the iterator of the position after the event (xact, at, id).
func Iterator(xact uint64, at time.Time, id uuid.UUID) string {
	return position{Xact: xact, At: at, ID: id, Time: at}.encode()
}

// SinceSQL finds a start from a time: its arguments are the org and the time less TransactionSkew.
const SinceSQL = sinceSQL
