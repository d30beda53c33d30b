package endpoints

import (
	"wds/internal/platform/paging"
	"wds/models"
)

// EventsPageSQL is the support desk's page query, for the plan test.
func EventsPageSQL(q EventsQuery) (string, []any) { return eventsPageSQL(q) }

// HealthSQL is the endpoint list's health query, for the plan test.
const HealthSQL = healthSQL

// OrgRecoveriesSQL counts an org's running recoveries, for the plan test.
const OrgRecoveriesSQL = orgRecoveriesSQL

// BatchSQL is a recovery batch's query and its parameters, for the plan test.
func BatchSQL(rec *models.Recovery, n int) (string, map[string]any) {
	return batchSQL, batchArgs(rec, n)
}

// LogPageSQL is a delivery log page's query, for the plan test.
func LogPageSQL(f LogFilter, limit int, cursor *paging.Cursor) (string, []any) {
	return logPageSQL(f, limit, cursor)
}
