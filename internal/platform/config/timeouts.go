package config

import "time"

// How long anything may wait. They live together because they bound one another: a request's
// deadline must fit inside the time the server allows for writing its answer, so that a request cut
// off by the deadline still gets its 503; a statement or a lock wait must not outlive the request
// that asked for it; and a request queued for the database gives up well before its deadline, while
// it can still be told so. Every process (serve, worker, dev, migrate, admin) gets the database
// limits; only the HTTP listeners get the HTTP ones. A test in this package checks the relations.
const (
	// HTTPReadHeaderTimeout is how long a client may take to send a request's headers: a client that
	// opens a connection and dribbles a header line (slowloris) is disconnected after it.
	HTTPReadHeaderTimeout = 10 * time.Second
	// HTTPReadTimeout is how long a client may take to send a whole request, headers and body (at
	// most 1 MiB).
	HTTPReadTimeout = 30 * time.Second
	// RequestTimeout is the deadline on each request's context, set by the API's middleware: the
	// database work a request starts ends by then, and the answer is 503 unavailable.
	RequestTimeout = 30 * time.Second
	// HTTPWriteTimeout is how long the server may take from the end of a request's headers to the end
	// of its answer. It covers the handler (RequestTimeout) and writing the answer afterwards.
	HTTPWriteTimeout = RequestTimeout + 10*time.Second
	// ShutdownGrace is how long `wds serve` lets requests in flight at SIGTERM finish: long enough
	// for one that has just started to run to its deadline and write its answer.
	ShutdownGrace = HTTPWriteTimeout
	// HTTPIdleTimeout is how long a kept-alive connection may wait for its next request. It is longer
	// than load balancers' usual idle timeout (60 s), so the balancer, not wds, closes idle
	// connections and never sends a request down one wds is closing.
	HTTPIdleTimeout = 2 * time.Minute

	// DBStatementTimeout is PostgreSQL's statement_timeout on every connection: no statement runs
	// longer than a request may. `wds migrate` turns it off (an index build may take longer).
	DBStatementTimeout = RequestTimeout
	// DBIdleInTransactionTimeout is PostgreSQL's idle_in_transaction_session_timeout on every
	// connection: a transaction left open between statements longer than a request may live (a
	// process stopped in a debugger, a defect that forgets a rollback) is ended by PostgreSQL, which
	// releases its locks, instead of holding them until someone notices.
	DBIdleInTransactionTimeout = RequestTimeout
	// DBLockTimeout is PostgreSQL's lock_timeout on every connection: a statement waiting longer than
	// this for a row, table or advisory lock fails (55P03), so one stuck transaction holds up the
	// others on its rows for at most this long instead of until their deadlines.
	DBLockTimeout = 10 * time.Second
	// DBCancelGrace is how long a statement whose caller gave up (its request's deadline passed, its
	// client hung up) gets to acknowledge PostgreSQL's cancel request before its connection is
	// dropped instead.
	DBCancelGrace = 2 * time.Second
	// DBTurnWait bounds how long work queues for a turn at the database (database.Concurrency): past
	// it the database is too busy to be worth waiting for, and the request answers 503 while a
	// retry elsewhere may still succeed.
	DBTurnWait = 10 * time.Second
)
