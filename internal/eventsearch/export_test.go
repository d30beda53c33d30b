package eventsearch

// EventsPageSQL is the support desk's page query, for the plan test.
func EventsPageSQL(q EventsQuery) (string, []any) { return eventsPageSQL(q) }
