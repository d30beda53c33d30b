package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// captured is one create's statements and its order's external id.
type captured struct {
	statements []loggedStatement
	token      string
}

// captureCreates sends creates, one at a time, to a `wds serve` of its own whose connections log
// every statement with its parameters (log_statement=all, asked for in the start-up packet of its
// connections only, so nothing else on the cluster logs), and returns each create's statements,
// each with the round trip it went in (its connections pass through a wireTap). The first create
// of a fresh process loads caches the others do not; only the later ones are returned. A short
// pause after each answer lets work the server does after it land in its create.
func (e *env) captureCreates(ctx context.Context, s *stack, g *ingester, n int) ([]captured, error) {
	u, err := url.Parse(s.dbURL)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	tap, err := newWireTap(u.Host)
	if err != nil {
		return nil, err
	}
	defer tap.close()
	u.Host = tap.addr()
	q := u.Query()
	q.Set("log_statement", "all")
	q.Set("sslmode", "disable") // the tap reads the stream
	u.RawQuery = q.Encode()
	p, base, _, err := e.startServe(ctx, "capture", append(s.environ[:len(s.environ):len(s.environ)], "DATABASE_URL="+u.String()))
	if err != nil {
		return nil, err
	}
	defer p.stop()
	g.base = base
	logPath := e.cluster.LogFile()
	var out []captured
	var mark map[int]int
	for i := 0; i <= n; i++ {
		fi, err := os.Stat(logPath)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		if mark == nil { // what the process sent before is not in the log windows
			mark = tap.mark()
		}
		if _, err := g.create(ctx); err != nil {
			return nil, fmt.Errorf("bench: capture: %w", err)
		}
		time.Sleep(300 * time.Millisecond)
		st, err := readStatements(logPath, fi.Size())
		if err != nil {
			return nil, err
		}
		tap.tripsOf(st, mark)
		if i > 0 {
			out = append(out, captured{st, g.prefix + strconv.FormatInt(g.seq.Load(), 10)})
		}
	}
	return out, nil
}

// captureReplay captures six creates of the load's shape with the pool's first key and builds the
// replay from the two that sent the same, fewest statements: the steady state of a busy key. Work a
// create shares with others lands in some creates' windows only: the API's batch of keys' last-use
// times (every two seconds, for every request since) and a new slice of the key's rate-limit budget
// (one statement for up to a second's worth of requests).
func (e *env) captureReplay(ctx context.Context, s *stack, g *ingester, t *tenant) (*replay, error) {
	c := &ingester{client: g.client, keys: &keyPool{keys: g.keys.keys[:1], perKey: intKeyBudget}, prefix: "capture-", payment: true}
	caps, err := e.captureCreates(ctx, s, c, 6)
	if err != nil {
		return nil, err
	}
	keys, err := integrationKeys(ctx, s.dbURL, t)
	if err != nil {
		return nil, err
	}
	best := [2]int{-1, -1}
	for i := range caps {
		for j := i + 1; j < len(caps); j++ {
			same := sameStatements(caps[i].statements, caps[j].statements) == nil
			if same && (best[0] < 0 || len(caps[i].statements) < len(caps[best[0]].statements)) {
				best = [2]int{i, j}
			}
		}
	}
	if best[0] < 0 {
		return nil, sameStatements(caps[0].statements, caps[1].statements)
	}
	a, b := caps[best[0]], caps[best[1]]
	return buildReplay(a.statements, b.statements, a.token, keys)
}

// integrationKeys reads the tenant's integration keys, each as column => value as text.
func integrationKeys(ctx context.Context, dbURL string, t *tenant) ([]map[string]string, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT k.id::text, kv.key, kv.value FROM integration_keys k, json_each_text(row_to_json(k)) kv
		WHERE k.org_id = $1 AND kv.value IS NOT NULL ORDER BY k.created_at, k.id`, t.orgID)
	if err != nil {
		return nil, fmt.Errorf("bench: integration keys: %w", err)
	}
	var out []map[string]string
	index := map[string]int{}
	for rows.Next() {
		var id, col, v string
		if err := rows.Scan(&id, &col, &v); err != nil {
			return nil, fmt.Errorf("bench: integration keys: %w", err)
		}
		i, ok := index[id]
		if !ok {
			i, index[id] = len(out), len(out)
			out = append(out, map[string]string{})
		}
		out[i][col] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("bench: integration keys: %w", err)
	}
	return out, nil
}

// replayPrefix begins the external ids of the replay's orders, apart from the load's and the capture's.
const replayPrefix = "replay"

// replay is the ingest baseline: a pgbench script of one create's statements and the constant values
// it runs with (pgbench -D).
type replay struct {
	script string
	defs   map[string]string
}

var (
	uuidRE      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?[+-]\d\d$`)
	paramRE     = regexp.MustCompile(`\$(\d+)`)
)

// subst is a value of the captured create that each replayed transaction replaces with a pgbench
// variable of its own: an id the create made, its external id, a column of its integration key.
type subst struct{ from, name string }

// buildReplay turns two creates' statements into a pgbench script that sends the same statements
// with the same values, but for what must be new in each transaction (the create's ids and external
// ids, wherever they occur, and its timestamps) and the integration key, which turns over the pool
// as the load's requests do (one key for every client would measure its rate-limit row's lock). A
// uuid of the first create that the second does not have is one the create made; token is the
// first create's external id. Each transaction starts with one query that reads no table and makes
// the new values.
func buildReplay(b, c []loggedStatement, token string, keys []map[string]string) (*replay, error) {
	if err := sameStatements(b, c); err != nil {
		return nil, err
	}
	subs := createdIDs(b, c)
	subs = append(subs, subst{token, "ext"})
	keySubs, err := keyColumns(b, keys)
	if err != nil {
		return nil, err
	}
	subs = append(subs, keySubs...)
	r := &replay{defs: map[string]string{}}
	consts := map[string]string{}
	var body strings.Builder
	batched := pipelined(b)
	for i, st := range b {
		if !batched[i] && i+1 < len(b) && batched[i+1] {
			body.WriteString("\\startpipeline\n")
		}
		body.WriteString(paramRE.ReplaceAllStringFunc(st.sql, func(m string) string {
			n, _ := strconv.Atoi(m[1:])
			if n < 1 || n > len(st.params) {
				return m
			}
			return r.param(st.params[n-1], c[i].params[n-1], subs, consts)
		}))
		body.WriteString("\n;\n") // on a line of its own: a statement may end in a comment
		if batched[i] && (i+1 == len(b) || !batched[i+1]) {
			body.WriteString("\\endpipeline\n")
		}
	}
	r.script = prelude(subs, keySubs, keys) + body.String()
	return r, nil
}

// sameStatements checks that two creates sent the same statements with as many parameters each,
// in the same round trips.
func sameStatements(b, c []loggedStatement) error {
	if len(b) != len(c) {
		return fmt.Errorf("bench: two creates sent %d and %d statements", len(b), len(c))
	}
	pb, pc := pipelined(b), pipelined(c)
	for i := range b {
		if b[i].sql != c[i].sql || len(b[i].params) != len(c[i].params) || pb[i] != pc[i] {
			return fmt.Errorf("bench: two creates differ at statement %d: %s", i+1, truncate(b[i].sql, 80))
		}
	}
	return nil
}

// pipelined reports, for each statement, whether it went in the round trip of the statement before
// it (a pgx batch): the replay sends those between pgbench's \startpipeline and \endpipeline, one
// round trip as well.
func pipelined(sts []loggedStatement) []bool {
	out := make([]bool, len(sts))
	for i := 1; i < len(sts); i++ {
		out[i] = sts[i].trip != 0 && sts[i].trip == sts[i-1].trip
	}
	return out
}

// values is every non-NULL parameter value of the statements.
func values(sts []loggedStatement) []string {
	var out []string
	for _, st := range sts {
		for _, p := range st.params {
			if p != nil {
				out = append(out, *p)
			}
		}
	}
	return out
}

// createdIDs are the uuids in b's values that c's values lack, in order of first appearance.
func createdIDs(b, c []loggedStatement) []subst {
	inC := map[string]bool{}
	for _, v := range values(c) {
		for _, u := range uuidRE.FindAllString(v, -1) {
			inC[u] = true
		}
	}
	var out []subst
	for _, v := range values(b) {
		for _, u := range uuidRE.FindAllString(v, -1) {
			if !inC[u] {
				inC[u] = true
				out = append(out, subst{u, fmt.Sprintf("u%d", len(out)+1)})
			}
		}
	}
	return out
}

// keyColumns finds the captured create's integration key among keys (each a row of integration_keys
// as column => text) by its id, and returns the columns of it that the statements carry and that
// differ from key to key (its id, its hash, its label).
func keyColumns(b []loggedStatement, keys []map[string]string) ([]subst, error) {
	vals := strings.Join(values(b), "\x00")
	var used map[string]string
	for _, k := range keys {
		if strings.Contains(vals, k["id"]) {
			used = k
		}
	}
	if used == nil {
		return nil, fmt.Errorf("bench: the captured create names none of the %d integration keys", len(keys))
	}
	names := make([]string, 0, len(used))
	for name := range used {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []subst
	for _, name := range names {
		v := used[name]
		if len(v) < 6 || !strings.Contains(vals, v) || !differs(keys, name) {
			continue
		}
		out = append(out, subst{v, "k_" + name})
	}
	return out, nil
}

// differs reports whether the keys have more than one value of the column.
func differs(keys []map[string]string, col string) bool {
	for _, k := range keys {
		if k[col] != keys[0][col] {
			return true
		}
	}
	return false
}

// param is the script's text for one parameter whose value was v in the first create and vc in the
// second: NULL, a variable of the transaction, or a constant (a pgbench -D variable, so the statement
// keeps a parameter there as the service's does) with the transaction's values put in.
func (r *replay) param(v, vc *string, subs []subst, consts map[string]string) string {
	if v == nil {
		return "NULL"
	}
	if *v == "" {
		return "''" // pgbench -D takes no empty value
	}
	if vc != nil && *vc != *v && timestampRE.MatchString(*v) {
		return ":ts"
	}
	for _, s := range subs {
		if *v == s.from {
			return ":" + s.name
		}
	}
	name, ok := consts[*v]
	if !ok {
		name = fmt.Sprintf("c%d", len(consts)+1)
		consts[*v], r.defs[name] = name, *v
	}
	expr := ":" + name
	for _, s := range subs {
		if strings.Contains(*v, s.from) {
			expr = fmt.Sprintf("replace(%s, %s, :%s)", expr, literal(s.from), s.name)
		}
	}
	return expr
}

// prelude starts each transaction: the next key of the pool (round robin, as the load takes them)
// and one query that reads no table and makes the transaction's ids, external id and time.
func prelude(subs, keySubs []subst, keys []map[string]string) string {
	cols := []string{"CAST(:run AS text) || '-' || CAST(:client_id AS text) || '-' || CAST(:seq AS text) AS ext",
		"CAST(now() AS text) AS ts"}
	for _, s := range subs {
		if strings.HasPrefix(s.name, "u") {
			cols = append(cols, "CAST(gen_random_uuid() AS text) AS "+s.name)
		}
	}
	rows := make([]string, len(keys))
	for i, k := range keys {
		row := []string{strconv.Itoa(i)}
		for _, s := range keySubs {
			row = append(row, literal(k[strings.TrimPrefix(s.name, "k_")]))
		}
		rows[i] = "(" + strings.Join(row, ", ") + ")"
	}
	names := []string{"n"}
	for _, s := range keySubs {
		cols = append(cols, "k."+s.name)
		names = append(names, s.name)
	}
	return fmt.Sprintf("\\set seq :seq + 1\n\\set kn (:client_id + :clients * :seq) %% %d\n"+
		"SELECT %s FROM (VALUES %s) AS k (%s) WHERE k.n = :kn \\gset\n",
		len(keys), strings.Join(cols, ", "), strings.Join(rows, ", "), strings.Join(names, ", "))
}

// literal is s as an SQL string literal (standard_conforming_strings is on).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// run is the variables of one pgbench run of the replay: its constants, and the external ids' prefix,
// which must differ between runs because each run's clients count their transactions from zero.
func (r *replay) run(prefix string, clients int) map[string]string {
	defs := map[string]string{"run": prefix, "seq": "0", "clients": strconv.Itoa(clients)}
	for k, v := range r.defs {
		defs[k] = v
	}
	return defs
}
