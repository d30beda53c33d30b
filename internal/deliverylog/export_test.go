package deliverylog

import (
	"wds/internal/platform/paging"
)

// LogPageSQL is a delivery log page's query, for the plan test.
func LogPageSQL(f LogFilter, limit int, cursor *paging.Cursor) (string, []any) {
	return logPageSQL(f, limit, cursor)
}
