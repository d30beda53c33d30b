package endpoints

import (
	"wds/internal/platform/paging"
)

// EventsPageSQL is the support desk's page query, for the plan test.
func EventsPageSQL(q EventsQuery) (string, []any) { return eventsPageSQL(q) }

// LogPageSQL is a delivery log page's query, for the plan test.
func LogPageSQL(f LogFilter, limit int, cursor *paging.Cursor) (string, []any) {
	return logPageSQL(f, limit, cursor)
}
