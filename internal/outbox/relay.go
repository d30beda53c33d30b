package outbox

// Queue is a table whose rows the relay (internal/dispatch) starts workflows from, with the one
// statement by which the relay writes it: the mark of rows started, which takes the row ids. The
// table's owner states it, so every statement writing a table sits in one package.
//
// Mark locks the rows still unmarked in id order first, with the lock an UPDATE takes (FOR NO KEY
// UPDATE, which an attempt's foreign-key check of its event does not wait for). A request's
// after-commit mark and a relay's may touch the same rows at once; an UPDATE alone locks them in the
// order its plan visits them, which on a sequential scan differs between statements and deadlocks
// them. Locking in one order cannot. A row already marked (an event's first attempt marks it,
// migration 00046) is neither locked nor written.
type Queue struct {
	Table string
	Mark  string
}

// Events is the outbox as the relay's queue. Its mark writes the events' state rows (event_states,
// migration 00050), where an event's dispatch time lives; the claims still name the queue "events",
// as the previous release's relays name it, so that relays of both releases keep apart.
var Events = Queue{
	Table: "events",
	Mark: `UPDATE event_states SET dispatched_at = clock_timestamp() WHERE event_id IN (
		SELECT event_id FROM event_states WHERE event_id IN ? AND dispatched_at IS NULL ORDER BY event_id FOR NO KEY UPDATE)
		AND dispatched_at IS NULL`,
}
