package deliverylog

import (
	"wds/internal/platform/paging"
)

// LogPageSQL is a delivery log page's query, for the plan test.
func LogPageSQL(f LogFilter, types []string, limit int, cursor *paging.Cursor) (string, []any) {
	return logPageSQL(f, types, limit, cursor)
}

// EndpointTypesSQL lists an endpoint's event types, for the plan test.
const EndpointTypesSQL = endpointTypesSQL
