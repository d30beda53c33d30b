package bench

import (
	"context"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/feed"
	"wds/internal/platform/database"
)

// feedStatement is the page's SQL as feed.Service.Read runs it, with its parameters' values.
type feedStatement struct {
	sql  string
	vars []any
}

// captureFeedSQL is the SQL feed.Service.Read runs for a page after a position, captured from GORM
// (database.EachRow runs GORM's row callbacks on the statement it sends), so the pgbench baseline
// follows any change to the query. The position is pos's: its three values name the parameters a
// consumer moves.
func captureFeedSQL(ctx context.Context, dbURL string, orgID uuid.UUID, pos feedPosition) (feedStatement, error) {
	db, err := database.Open(ctx, dbURL, quietLog())
	if err != nil {
		return feedStatement{}, err
	}
	defer database.Close(db)
	var st feedStatement
	capture := func(tx *gorm.DB) {
		if strings.Contains(tx.Statement.SQL.String(), "pg_snapshot_xmin") {
			st = feedStatement{sql: tx.Statement.SQL.String(), vars: append([]any(nil), tx.Statement.Vars...)}
		}
	}
	if err := db.Callback().Row().Before("gorm:row").Register("wdsbench:capture", capture); err != nil {
		return st, fmt.Errorf("bench: %w", err)
	}
	q := feed.Query{OrgID: orgID, After: feedIterator(pos.xact, pos.at, pos.id), Limit: pageLimit}
	if _, err := feed.NewService(db, 0).Read(ctx, q); err != nil {
		return st, err
	}
	if st.sql == "" {
		return st, fmt.Errorf("bench: feed.Service.Read ran no statement through GORM's row callbacks")
	}
	return st, nil
}

// feedPosition is a position's three parameters of the page: its transaction, time and event id.
type feedPosition struct {
	xact uint64
	at   time.Time
	id   uuid.UUID
}

var placeholderRE = regexp.MustCompile(`\$(\d+)`)

// pgbenchPage is the page's SQL with every parameter a pgbench variable, so pgbench sends them as
// parameters of a prepared statement, as wds's driver does: pos's three (every type's branch has
// them) become the variables names gives, every other parameter a constant, c<n>, in defs.
func (st feedStatement) pgbenchPage(pos feedPosition, names [3]string) (string, map[string]string, error) {
	defs := map[string]string{}
	var vars []string
	seen := [3]int{}
	for i, v := range st.vars {
		name := fmt.Sprintf("c%d", i+1)
		switch k := pos.index(v); k {
		case -1:
			text, err := pgText(v)
			if err != nil {
				return "", nil, err
			}
			defs[name] = text
		default:
			name = names[k]
			seen[k]++
		}
		vars = append(vars, ":"+name)
	}
	if seen[0] == 0 || seen[0] != seen[1] || seen[0] != seen[2] {
		return "", nil, fmt.Errorf("bench: the feed's page no longer takes the position once a type (%v): update pgbenchPage: %s", seen, st.sql)
	}
	var bad error
	sql := placeholderRE.ReplaceAllStringFunc(st.sql, func(p string) string {
		n, _ := strconv.Atoi(p[1:])
		if n < 1 || n > len(vars) {
			bad = fmt.Errorf("bench: the feed's page has %s but %d parameters", p, len(vars))
			return p
		}
		return vars[n-1]
	})
	return sql, defs, bad
}

// index is which of the position's parameters v is: 0 the transaction (as text), 1 the time, 2 the
// id; -1 none.
func (p feedPosition) index(v any) int {
	switch v := v.(type) {
	case string:
		if v == strconv.FormatUint(p.xact, 10) {
			return 0
		}
	case time.Time:
		if v.Equal(p.at) {
			return 1
		}
	case uuid.UUID:
		if v == p.id {
			return 2
		}
	}
	return -1
}

// pgText is a parameter's value as pgbench passes it: text, which PostgreSQL reads as the type the
// statement gives the parameter.
func pgText(v any) (string, error) {
	switch v := v.(type) {
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano), nil
	case driver.Valuer:
		x, err := v.Value()
		if err != nil {
			return "", fmt.Errorf("bench: a feed parameter: %w", err)
		}
		return fmt.Sprint(x), nil
	default:
		return fmt.Sprint(v), nil
	}
}

// feedWalkScript is the baseline of following next: each client walks like an HTTP consumer, a
// walk starting before a random event in a query that reads no table (\gset), then each page's last
// row (\aset keeps the last row: the limit+1st, one further than the API's next, which changes
// nothing in the work done) is the next page's position.
func feedWalkScript(page string) string {
	return `\if :left <= 0
\set ms :t0ms + random(0, :maxstart)
SELECT CAST(:xact AS text) AS xact_id, CAST('epoch' AS timestamptz) + CAST(:ms AS bigint) * interval '1 millisecond' AS created_at,
	CAST(:startid AS uuid) AS id \gset
\set left :walk
\endif
` + page + ` \aset
\set left :left - 1
`
}

// feedPollScript is the baseline of polling at the end: each page starts where the last one's
// horizon left it (\aset: below), before every event of that transaction, as the API's next does.
func feedPollScript(page string) string { return page + " \\aset\n" }

// The scripts' files, in the run's directory: not feedwalk.* or feedpoll.*, which name pgbench's
// transaction logs of each side.
const (
	feedWalkFile = "feed-walk.sql"
	feedPollFile = "feed-poll.sql"
)

// feedScripts captures the page's SQL, writes both scripts into res and the run's directory, and
// returns the page's constants.
func (e *env) feedScripts(ctx context.Context, dbURL string, h *feedHistory, res *FeedResult) (map[string]string, error) {
	pos := feedPosition{xact: h.xact, at: h.at(0), id: uuid.New()}
	st, err := captureFeedSQL(ctx, dbURL, h.orgID, pos)
	if err != nil {
		return nil, err
	}
	walk, defs, err := st.pgbenchPage(pos, [3]string{"xact_id", "created_at", "id"})
	if err != nil {
		return nil, err
	}
	poll, _, err := st.pgbenchPage(pos, [3]string{"below", "zeroat", "zeroid"})
	if err != nil {
		return nil, err
	}
	res.Script, res.PollScript = feedWalkScript(walk), feedPollScript(poll)
	for name, text := range map[string]string{feedWalkFile: res.Script, feedPollFile: res.PollScript} {
		if err := os.WriteFile(filepath.Join(e.dir, name), []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	return defs, nil
}
