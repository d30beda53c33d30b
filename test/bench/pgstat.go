package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"
)

// statementSettings load pg_stat_statements into the run's cluster and have it count the statements
// triggers and functions run too (top_level false), and the time spent planning each, so the
// delivery-only line can say what each statement of a delivery costs wds's PostgreSQL: a statement
// planned again at each execution costs its planning as well as its run. Both sides of every line
// run on this cluster.
var statementSettings = []string{"shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all",
	"pg_stat_statements.max=2000", "pg_stat_statements.track_planning=on"}

// benchSQL marks the benchmark's own statements on wds's database (the events it commits, its idle
// checks, these readings), which the statement counts leave out: pg_stat_statements keeps a
// statement's text as first seen, comment included.
const benchSQL = "/* wdsbench */ "

// StatementCost is one statement's share of what a delivered event asked of wds's PostgreSQL, per
// delivered event: how often it ran and what it read, wrote and took.
type StatementCost struct {
	Query string `json:"query"`
	// TopLevel is false for a statement a trigger or function ran inside another, whose figures are
	// also in the one that called it.
	TopLevel bool    `json:"top_level"`
	Calls    float64 `json:"calls"`
	Rows     float64 `json:"rows"`
	TotalMS  float64 `json:"total_ms"`
	// PlanMS is the time spent planning it (a prepared statement's generic plan is planned once).
	PlanMS        float64 `json:"plan_ms"`
	BlocksHit     float64 `json:"shared_blks_hit"`
	BlocksDirtied float64 `json:"shared_blks_dirtied"`
	BlocksWritten float64 `json:"shared_blks_written"`
	WALRecords    float64 `json:"wal_records"`
	WALBytes      float64 `json:"wal_bytes"`
}

// TableWrites are a table's row writes per delivered event, from pg_stat_user_tables; an update that
// is not HOT writes a new entry in every index of the table.
type TableWrites struct {
	Table      string  `json:"table"`
	Inserts    float64 `json:"inserts"`
	Updates    float64 `json:"updates"`
	HotUpdates float64 `json:"hot_updates"`
	Deletes    float64 `json:"deletes"`
	Indexes    int     `json:"indexes"`
}

// DatabaseCost is what the wds side's rounds asked of wds's database, per delivered event.
type DatabaseCost struct {
	Transactions float64         `json:"transactions"`
	Statements   []StatementCost `json:"statements"`
	Tables       []TableWrites   `json:"tables"`
}

// statSnapshot is the cumulative counters at one moment.
type statSnapshot struct {
	statements map[string]StatementCost // by queryid and level
	tables     map[string]TableWrites
	commits    float64
}

// dbMeter accumulates the differences of the snapshots taken around each measured span.
type dbMeter struct {
	db         *gorm.DB
	statements map[string]StatementCost
	tables     map[string]TableWrites
	commits    float64
	before     *statSnapshot
}

func newDBMeter(ctx context.Context, db *gorm.DB) (*dbMeter, error) {
	if err := db.WithContext(ctx).Exec(benchSQL + "CREATE EXTENSION IF NOT EXISTS pg_stat_statements").Error; err != nil {
		return nil, fmt.Errorf("bench: pg_stat_statements: %w", err)
	}
	return &dbMeter{db: db, statements: map[string]StatementCost{}, tables: map[string]TableWrites{}}, nil
}

// start takes the snapshot a span's figures are counted from.
func (m *dbMeter) start(ctx context.Context) error {
	s, err := m.snapshot(ctx)
	m.before = s
	return err
}

// stop adds what happened since start. An idle backend hands its table counters to the shared
// statistics within ten seconds (PostgreSQL 15), so it waits that long first.
func (m *dbMeter) stop(ctx context.Context) error {
	time.Sleep(11 * time.Second)
	after, err := m.snapshot(ctx)
	if err != nil {
		return err
	}
	for k, a := range after.statements {
		b := m.before.statements[k]
		acc := m.statements[k]
		acc.Query, acc.TopLevel = a.Query, a.TopLevel
		acc.Calls += a.Calls - b.Calls
		acc.Rows += a.Rows - b.Rows
		acc.TotalMS += a.TotalMS - b.TotalMS
		acc.PlanMS += a.PlanMS - b.PlanMS
		acc.BlocksHit += a.BlocksHit - b.BlocksHit
		acc.BlocksDirtied += a.BlocksDirtied - b.BlocksDirtied
		acc.BlocksWritten += a.BlocksWritten - b.BlocksWritten
		acc.WALRecords += a.WALRecords - b.WALRecords
		acc.WALBytes += a.WALBytes - b.WALBytes
		if acc.Calls > 0 {
			m.statements[k] = acc
		}
	}
	for k, a := range after.tables {
		b := m.before.tables[k]
		acc := m.tables[k]
		acc.Table, acc.Indexes = a.Table, a.Indexes
		acc.Inserts += a.Inserts - b.Inserts
		acc.Updates += a.Updates - b.Updates
		acc.HotUpdates += a.HotUpdates - b.HotUpdates
		acc.Deletes += a.Deletes - b.Deletes
		m.tables[k] = acc
	}
	m.commits += after.commits - m.before.commits
	return nil
}

func (m *dbMeter) snapshot(ctx context.Context) (*statSnapshot, error) {
	s := &statSnapshot{statements: map[string]StatementCost{}, tables: map[string]TableWrites{}}
	var stmts []struct {
		Key string
		StatementCost
	}
	err := m.db.WithContext(ctx).Raw(benchSQL + `SELECT queryid::text || '/' || toplevel::text AS key, query, toplevel AS top_level,
			calls, rows, total_exec_time AS total_ms, total_plan_time AS plan_ms, shared_blks_hit AS blocks_hit, shared_blks_dirtied AS blocks_dirtied,
			shared_blks_written AS blocks_written, wal_records, wal_bytes
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND query NOT LIKE '/* wdsbench */%'`).Find(&stmts).Error
	if err != nil {
		return nil, fmt.Errorf("bench: read pg_stat_statements: %w", err)
	}
	for _, st := range stmts {
		s.statements[st.Key] = st.StatementCost
	}
	var tables []TableWrites
	err = m.db.WithContext(ctx).Raw(benchSQL + `SELECT t.relname AS "table", n_tup_ins AS inserts, n_tup_upd AS updates,
			n_tup_hot_upd AS hot_updates, n_tup_del AS deletes,
			(SELECT count(*) FROM pg_index i WHERE i.indrelid = t.relid) AS indexes
		FROM pg_stat_user_tables t`).Find(&tables).Error
	if err != nil {
		return nil, fmt.Errorf("bench: read pg_stat_user_tables: %w", err)
	}
	for _, t := range tables {
		s.tables[t.Table] = t
	}
	err = m.db.WithContext(ctx).Raw(benchSQL + `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).
		Scan(&s.commits).Error
	if err != nil {
		return nil, fmt.Errorf("bench: read pg_stat_database: %w", err)
	}
	return s, nil
}

// cost is the accumulated figures per event of n, statements by total time, tables written.
func (m *dbMeter) cost(n int) *DatabaseCost {
	per := float64(n)
	c := &DatabaseCost{Transactions: round2(m.commits / per)}
	for _, s := range m.statements {
		s.Calls, s.Rows, s.TotalMS, s.PlanMS = s.Calls/per, s.Rows/per, s.TotalMS/per, s.PlanMS/per
		s.BlocksHit, s.BlocksDirtied, s.BlocksWritten = s.BlocksHit/per, s.BlocksDirtied/per, s.BlocksWritten/per
		s.WALRecords, s.WALBytes = s.WALRecords/per, s.WALBytes/per
		s.Query = strings.Join(strings.Fields(s.Query), " ")
		c.Statements = append(c.Statements, s)
	}
	sort.Slice(c.Statements, func(i, j int) bool { return c.Statements[i].TotalMS > c.Statements[j].TotalMS })
	for _, t := range m.tables {
		if t.Inserts+t.Updates+t.Deletes == 0 {
			continue
		}
		t.Inserts, t.Updates, t.HotUpdates, t.Deletes = t.Inserts/per, t.Updates/per, t.HotUpdates/per, t.Deletes/per
		c.Tables = append(c.Tables, t)
	}
	sort.Slice(c.Tables, func(i, j int) bool { return c.Tables[i].Table < c.Tables[j].Table })
	return c
}

// print writes the figures as the tables docs/benchmarks.md shows them.
func (c *DatabaseCost) print(w io.Writer) {
	fmt.Fprintf(w, "wds's PostgreSQL per delivered event: %.2f transactions\n", c.Transactions)
	fmt.Fprintln(w, "| level | calls | rows | ms | planning ms | blks hit | dirtied | written | WAL records | WAL bytes | statement |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range c.Statements {
		if s.Calls < 0.005 {
			continue
		}
		level := "top"
		if !s.TopLevel {
			level = "nested"
		}
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.3f | %.3f | %.1f | %.2f | %.2f | %.2f | %.0f | %s |\n", level, s.Calls, s.Rows, s.TotalMS, s.PlanMS,
			s.BlocksHit, s.BlocksDirtied, s.BlocksWritten, s.WALRecords, s.WALBytes, truncateQuery(s.Query, 160))
	}
	fmt.Fprintln(w, "| table | inserts | updates | of them HOT | deletes | indexes |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, t := range c.Tables {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.2f | %d |\n", t.Table, t.Inserts, t.Updates, t.HotUpdates, t.Deletes, t.Indexes)
	}
}

func truncateQuery(q string, n int) string {
	if len(q) <= n {
		return q
	}
	return q[:n] + "…"
}
