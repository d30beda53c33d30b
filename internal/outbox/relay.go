package outbox

// Queue is a table whose rows the relay (internal/dispatch) starts workflows from, with the relay's
// three writes to it, as SQL that takes the row ids: the lease it holds while it starts claimed rows
// (the lease's length in seconds first), the lease's release for rows it did not start, and the
// mark of rows started. The table's owner states them, so every statement writing a table sits in
// one package.
//
// Release and Mark lock their rows in id order first. A request's after-commit mark and a relay's
// (or a release) may touch the same rows at once; an UPDATE alone locks them in the order its plan
// visits them, which on a sequential scan differs between statements and deadlocks them. Locking in
// one order cannot.
type Queue struct {
	Table                string
	Lease, Release, Mark string
}

// Events is the outbox as the relay's queue.
var Events = Queue{
	Table: "events",
	Lease: `UPDATE events SET relay_lease_until = clock_timestamp() + ? * interval '1 second' WHERE id IN ?`,
	Release: `UPDATE events SET relay_lease_until = NULL
		WHERE id IN (SELECT id FROM events WHERE id IN ? ORDER BY id FOR UPDATE)`,
	Mark: `UPDATE events SET dispatched_at = clock_timestamp()
		WHERE id IN (SELECT id FROM events WHERE id IN ? ORDER BY id FOR UPDATE) AND dispatched_at IS NULL`,
}
