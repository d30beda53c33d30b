package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// LockWaits are the waits for a lock that lasted over FloorMs in wds's database during the wds
// side's rounds of the delivery-only line, where every attempt goes to one endpoint from many
// workflows at once. PostgreSQL logs such a wait when the lock is granted (log_lock_waits, with
// deadlock_timeout at the floor), so waits under the floor are not seen one by one: the 99th
// percentile of the attempts' waits is under the floor when at most 1% of attempts waited past it.
type LockWaits struct {
	Attempts int     `json:"attempts"`
	FloorMs  float64 `json:"floor_ms"`
	Over     int     `json:"waits_over_floor"`
	// P99Ms is the attempts' 99th percentile wait when it is over the floor; else the floor, as a bound.
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	// ByRelation counts the waits by the relation whose row or tuple was waited for ("" when the log
	// named none).
	ByRelation map[string]int `json:"by_relation"`
}

// lockWaitFloor is the shortest wait logged: the bound for an attempt's wait at the p99.
const lockWaitFloor = time.Millisecond

var (
	// acquiredRE is PostgreSQL's entry for a wait granted after deadlock_timeout.
	acquiredRE = regexp.MustCompile(`^process \d+ acquired \S+ on .+ after ([\d.]+) ms$`)
	// waitContextRE is the context that follows it for a row: the relation the tuple is in.
	waitContextRE = regexp.MustCompile(`tuple \(\d+,\d+\) (?:of|in) relation "([^"]+)"`)
)

// lockWatch logs the lock waits over lockWaitFloor while it runs, each entry naming its database:
// on the cluster, Temporal's databases share the server.
type lockWatch struct {
	db       *gorm.DB
	database string
	log      string
	offset   int64
}

// watchedPrefix is the log_line_prefix while a lockWatch runs (logEntryRE reads it).
const watchedPrefix = "%m [%p] db=%d "

// watchLocks turns the logging of lock waits on and notes where the log stands.
func watchLocks(ctx context.Context, db *gorm.DB, logPath string) (*lockWatch, error) {
	fi, err := os.Stat(logPath)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	w := &lockWatch{db: db, log: logPath, offset: fi.Size()}
	if err := db.WithContext(ctx).Raw(benchSQL + "SELECT current_database()").Scan(&w.database).Error; err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return w, w.set(ctx, fmt.Sprintf("ALTER SYSTEM SET deadlock_timeout = '%dms'", lockWaitFloor.Milliseconds()),
		"ALTER SYSTEM SET log_lock_waits = on", "ALTER SYSTEM SET log_line_prefix = '"+watchedPrefix+"'")
}

// stop turns the logging off again and reads the waits logged since watchLocks, of attempts.
func (w *lockWatch) stop(ctx context.Context, attempts int) (*LockWaits, error) {
	if err := w.set(ctx, "ALTER SYSTEM RESET deadlock_timeout", "ALTER SYSTEM RESET log_lock_waits",
		"ALTER SYSTEM RESET log_line_prefix"); err != nil {
		return nil, err
	}
	return readLockWaits(w.log, w.offset, w.database, attempts)
}

// readLockWaits reads the lock waits in database logged in path from byte offset on, of attempts.
func readLockWaits(path string, offset int64, database string, attempts int) (*LockWaits, error) {
	res := &LockWaits{Attempts: attempts, FloorMs: ms(lockWaitFloor), ByRelation: map[string]int{}}
	var waits []float64
	waiter, relation := -1, ""
	count := func() {
		if waiter >= 0 {
			res.ByRelation[relation]++
		}
		waiter, relation = -1, ""
	}
	err := readLog(path, offset, func(e logEntry) error {
		if e.kind == "CONTEXT" && e.pid == waiter {
			if m := waitContextRE.FindStringSubmatch(e.text); m != nil {
				relation = m[1]
			}
			return nil
		}
		if e.kind != "LOG" {
			return nil
		}
		count() // an entry's context follows it in the same write, before any other entry
		if m := acquiredRE.FindStringSubmatch(e.text); m != nil && e.db == database {
			d, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				return fmt.Errorf("bench: a lock wait %q: %w", e.text, err)
			}
			waits, waiter = append(waits, d), e.pid
		}
		return nil
	})
	count()
	if err != nil {
		return nil, err
	}
	res.Over, res.P99Ms = len(waits), res.FloorMs
	slices.Sort(waits)
	if n := len(waits); n > 0 {
		res.MaxMs = round2(waits[n-1])
		// The p99's rank among the attempts' waits, from 1; the lowest attempts-n waited under the floor.
		rank := (99*attempts + 99) / 100
		if k := rank - (attempts - n) - 1; k >= 0 {
			res.P99Ms = round2(waits[k])
		}
	}
	return res, nil
}

func (w *lockWatch) set(ctx context.Context, statements ...string) error {
	for _, s := range append(statements, "SELECT pg_reload_conf()") {
		if err := w.db.WithContext(ctx).Exec(benchSQL + s).Error; err != nil {
			return fmt.Errorf("bench: %s: %w", s, err)
		}
	}
	return nil
}

// String is the waits as the results table gives them.
func (lw *LockWaits) String() string {
	p99 := fmt.Sprintf("p99 %.2f ms", lw.P99Ms)
	if lw.P99Ms <= lw.FloorMs {
		p99 = fmt.Sprintf("p99 under %.0f ms", lw.FloorMs)
	}
	s := fmt.Sprintf("%d of %d attempts waited over %.0f ms (%s, max %.2f ms)", lw.Over, lw.Attempts, lw.FloorMs, p99, lw.MaxMs)
	for _, rel := range slices.Sorted(maps.Keys(lw.ByRelation)) {
		name := rel
		if name == "" {
			name = "no relation named"
		}
		s += fmt.Sprintf("; %s %d", name, lw.ByRelation[rel])
	}
	return s
}
