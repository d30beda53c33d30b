package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// LockWaits are the waits for a lock that lasted over FloorMs in wds's database during the wds
// side's rounds of the delivery-only line, where every attempt goes to one endpoint from many
// workflows at once. PostgreSQL logs such a wait when the lock is granted (lockSettings), so waits
// under the floor are not seen one by one: the 99th percentile of the attempts' waits is under the
// floor when at most 1% of attempts waited past it. An attempt's waits are those of its own two
// statements, the only ones of a round that name webhook_deliveries (its read and its write); the
// relay's and the rest are counted apart.
type LockWaits struct {
	Attempts int     `json:"attempts"`
	FloorMs  float64 `json:"floor_ms"`
	// Over is how many of the attempts' statements waited past the floor.
	Over int `json:"waits_over_floor"`
	// P99Ms is the attempts' 99th percentile wait when it is over the floor; else the floor, as a bound.
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	// ByRelation counts the attempts' waits by the relation whose row was waited for, or else by the
	// kind of lock ("ExclusiveLock on extension of relation of database").
	ByRelation map[string]int `json:"by_relation"`
	// Others counts the other statements' waits past the floor by what waited, the start of its text.
	Others map[string]int `json:"other_waits"`
}

// lockWaitFloor is the shortest wait logged: the bound for an attempt's wait at the p99.
const lockWaitFloor = time.Millisecond

var (
	// acquiredRE is PostgreSQL's entry for a wait granted after deadlock_timeout.
	acquiredRE = regexp.MustCompile(`^process \d+ acquired (\S+) on (.+) after ([\d.]+) ms$`)
	// lockObjectRE is what names one object of a kind in a lock's description, left out of its kind.
	lockObjectRE = regexp.MustCompile(` \d+| \(\d+,\d+\)`)
	// waitContextRE is the context that follows it for a row: the relation the tuple is in.
	waitContextRE = regexp.MustCompile(`tuple \(\d+,\d+\) (?:of|in) relation "([^"]+)"`)
)

// lockSettings have the run's cluster log every wait for a lock when it is granted, if it lasted
// past deadlock_timeout, each entry naming its database (on the cluster, Temporal's databases share
// the server). With the default deadlock_timeout (1 s) that logs next to nothing; the delivery-only
// line lowers it to lockWaitFloor for its rounds only (watchLocks), since a wait past it then runs
// the deadlock check, and under a queue of waiters on one row (B's creates in the noisy line, each
// taking its org's order number) that check is a cost of its own.
var lockSettings = []string{"log_lock_waits=on", "log_line_prefix='" + watchedPrefix + "'"}

// watchedPrefix is the cluster's log_line_prefix (logEntryRE reads it).
const watchedPrefix = "%m [%p] db=%d "

// lockWatch reads the lock waits of one database logged while it runs.
type lockWatch struct {
	db       *gorm.DB
	database string
	log      string
	offset   int64
}

// watchLocks lowers deadlock_timeout to lockWaitFloor, so that every wait past it is logged. A
// reloaded setting reaches a connection after the next statement it runs, so the line warms up
// between this and begin: a connection's first statement after it may wait unlogged.
func watchLocks(ctx context.Context, db *gorm.DB, logPath string) (*lockWatch, error) {
	w := &lockWatch{db: db, log: logPath}
	if err := db.WithContext(ctx).Raw(benchSQL + "SELECT current_database()").Scan(&w.database).Error; err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return w, w.set(ctx, fmt.Sprintf("ALTER SYSTEM SET deadlock_timeout = '%dms'", lockWaitFloor.Milliseconds()))
}

// begin notes where the log stands: the waits stop reads are those logged from here on.
func (w *lockWatch) begin() error {
	fi, err := os.Stat(w.log)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	w.offset = fi.Size()
	return nil
}

// stop puts deadlock_timeout back and reads the waits logged since begin, of attempts.
func (w *lockWatch) stop(ctx context.Context, attempts int) (*LockWaits, error) {
	if err := w.set(ctx, "ALTER SYSTEM RESET deadlock_timeout"); err != nil {
		return nil, err
	}
	return readLockWaits(w.log, w.offset, w.database, attempts)
}

func (w *lockWatch) set(ctx context.Context, statement string) error {
	for _, s := range []string{statement, "SELECT pg_reload_conf()"} {
		if err := w.db.WithContext(ctx).Exec(benchSQL + s).Error; err != nil {
			return fmt.Errorf("bench: %s: %w", s, err)
		}
	}
	return nil
}

// loggedWait is one wait PostgreSQL logged: how long, for what, and the statement that waited.
type loggedWait struct {
	ms              float64
	lock, statement string
}

// readLockWaits reads the lock waits in database logged in path from byte offset on, of attempts.
func readLockWaits(path string, offset int64, database string, attempts int) (*LockWaits, error) {
	waits, err := readWaits(path, offset, database)
	if err != nil {
		return nil, err
	}
	res := &LockWaits{Attempts: attempts, FloorMs: ms(lockWaitFloor), ByRelation: map[string]int{}, Others: map[string]int{}}
	var own []float64
	for _, w := range waits {
		if !strings.Contains(w.statement, "webhook_deliveries") {
			res.Others[truncateQuery(w.statement, 60)]++
			continue
		}
		own = append(own, w.ms)
		res.ByRelation[w.lock]++
	}
	res.Over, res.P99Ms = len(own), res.FloorMs
	slices.Sort(own)
	if n := len(own); n > 0 {
		res.MaxMs = round2(own[n-1])
		// The p99's rank among the attempts' waits, from 1; the lowest attempts-n waited under the floor.
		rank := (99*attempts + 99) / 100
		if k := rank - (attempts - n) - 1; k >= 0 {
			res.P99Ms = round2(own[k])
		}
	}
	return res, nil
}

// readWaits reads the waits database's statements logged: each wait's entry, then in the same write
// its context (the tuple's relation, for a row) and the statement.
func readWaits(path string, offset int64, database string) ([]loggedWait, error) {
	var waits []loggedWait
	waiter := -1
	err := readLog(path, offset, func(e logEntry) error {
		switch {
		case e.pid == waiter && e.kind == "CONTEXT":
			if m := waitContextRE.FindStringSubmatch(e.text); m != nil {
				waits[len(waits)-1].lock = m[1]
			}
			return nil
		case e.pid == waiter && e.kind == "STATEMENT":
			waits[len(waits)-1].statement = strings.Join(strings.Fields(e.text), " ")
			return nil
		case e.kind != "LOG":
			return nil
		}
		waiter = -1
		m := acquiredRE.FindStringSubmatch(e.text)
		if m == nil || e.db != database {
			return nil
		}
		d, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return fmt.Errorf("bench: a lock wait %q: %w", e.text, err)
		}
		waits, waiter = append(waits, loggedWait{ms: d, lock: m[1] + " on " + lockObjectRE.ReplaceAllString(m[2], "")}), e.pid
		return nil
	})
	return waits, err
}

// String is the waits as the results table gives them.
func (lw *LockWaits) String() string {
	p99 := fmt.Sprintf("p99 %.2f ms", lw.P99Ms)
	if lw.P99Ms <= lw.FloorMs {
		p99 = fmt.Sprintf("p99 under %.0f ms", lw.FloorMs)
	}
	s := fmt.Sprintf("%d of %d attempts waited over %.0f ms (%s, max %.2f ms)", lw.Over, lw.Attempts, lw.FloorMs, p99, lw.MaxMs)
	for _, rel := range slices.Sorted(maps.Keys(lw.ByRelation)) {
		s += fmt.Sprintf("; %s %d", rel, lw.ByRelation[rel])
	}
	for _, st := range slices.Sorted(maps.Keys(lw.Others)) {
		s += fmt.Sprintf("; other statements' waits: %q %d", st, lw.Others[st])
	}
	return s
}
