package database

// JSONTime formats a timestamptz expression in SQL exactly as Go's encoding/json writes a UTC
// time.Time: PostgreSQL's JSON form of a timestamp is RFC 3339 with trailing fractional zeros
// dropped, so times PostgreSQL writes into JSON (an order's arrays, an event's created_at) read the
// same as those Go writes. NULL stays NULL. (No format string: pgbench, which replays this SQL as the
// benchmark's baseline, would take ":MI" for a variable.)
func JSONTime(col string) string {
	return `((to_json(` + col + ` AT TIME ZONE 'UTC') #>> '{}') || 'Z')`
}
