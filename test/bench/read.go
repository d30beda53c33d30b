package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/order"
	"wds/internal/platform/database"
	"wds/internal/platform/paging"
)

// ReadResult is the Read API list benchmark: walks of pages through the order list by HTTP clients,
// beside pgbench running the very SQL the list handler runs.
type ReadResult struct {
	Orders          int          `json:"orders"`
	Limit           int          `json:"limit"`
	Walk            int          `json:"walk_pages"`
	WDS             Measure      `json:"wds"`
	PGBench         Measure      `json:"pgbench"`
	ThroughputRatio float64      `json:"throughput_ratio"`
	FirstPage       Measure      `json:"first_page"`
	LastPage        Measure      `json:"last_page"`
	LastFirstRatio  float64      `json:"last_first_p50_ratio"`
	Curve           []CurvePoint `json:"curve"`
	// CPU milliseconds per page (wds) and per transaction (pgbench), by process, in the main run.
	CPUPerPage      map[string]float64 `json:"cpu_ms_per_page"`
	CPUPerPgbenchTx map[string]float64 `json:"cpu_ms_per_pgbench_tx"`
	Script          string             `json:"pgbench_script"`
}

// CurvePoint is latency and throughput at one concurrency, for the chart.
type CurvePoint struct {
	Clients int     `json:"clients"`
	WDS     Measure `json:"wds"`
	PGBench Measure `json:"pgbench"`
}

// pageLimit is the page size the issue measures (`limit=50`).
const pageLimit = 50

// reader drives GET /v1/orders against one wds serve.
type reader struct {
	base   string
	client *http.Client
	keys   *keyPool
	data   *dataset
	walk   int
}

// maxStart is the last order a walk may start after so that walk pages never run off the end (pgbench's
// walk advances limit+1 rows a page, see readScript).
func (r *reader) maxStart() int { return r.data.orders - r.walk*(pageLimit+1) - 1 }

// page fetches one page after the cursor (nil: the first page) and returns the next cursor, nil on the
// last page. Only next_cursor is decoded: the load generator shares two cores with the server, and
// decoding fifty orders it does not need would steal time from what is measured.
func (r *reader) page(ctx context.Context, cur *paging.Cursor, buf *bytes.Buffer) (*paging.Cursor, error) {
	q := url.Values{"limit": {fmt.Sprint(pageLimit)}}
	if cur != nil {
		q.Set("cursor_at", cur.At.UTC().Format(time.RFC3339Nano))
		q.Set("cursor_id", cur.ID.String())
	}
	key, err := r.keys.get()
	if err != nil {
		return nil, err
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/v1/orders?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /v1/orders: %w", err)
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := io.Copy(buf, resp.Body); err != nil {
		return nil, fmt.Errorf("GET /v1/orders: read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/orders: %d %s", resp.StatusCode, truncate(buf.String(), 200))
	}
	return nextCursor(buf.Bytes())
}

// nextCursor reads next_cursor, the envelope's last member, without decoding the rows before it.
func nextCursor(body []byte) (*paging.Cursor, error) {
	i := bytes.LastIndex(body, []byte(`"next_cursor":`))
	if i < 0 {
		return nil, errors.New("GET /v1/orders: no next_cursor in the answer")
	}
	var env struct {
		NextCursor *struct {
			At time.Time `json:"at"`
			ID uuid.UUID `json:"id"`
		} `json:"next_cursor"`
	}
	if err := json.Unmarshal(append([]byte("{"), body[i:]...), &env); err != nil {
		return nil, fmt.Errorf("GET /v1/orders: next_cursor: %w", err)
	}
	if env.NextCursor == nil {
		return nil, nil
	}
	return &paging.Cursor{At: env.NextCursor.At, ID: env.NextCursor.ID}, nil
}

// walker is one client: from a random position it follows next_cursor for walk pages, then starts again
// elsewhere, so the whole list is read, not just its hot head.
func (r *reader) walker(seed uint64) op {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var cur *paging.Cursor
	left := 0
	buf := new(bytes.Buffer)
	return func(ctx context.Context) error {
		if left == 0 {
			cur = &paging.Cursor{At: r.data.cursorAt(rng.IntN(r.maxStart() + 1)), ID: uuid.Nil}
			left = r.walk
		}
		next, err := r.page(ctx, cur, buf)
		left--
		if err != nil || next == nil {
			left = 0
			return err
		}
		cur = next
		return nil
	}
}

// firstAndLast alternates the first page and the last page from one client for d, so both see the
// same moment's noise, and checks that the last page really is the last.
func (r *reader) firstAndLast(ctx context.Context, d time.Duration) (first, last Measure, err error) {
	lastCur := &paging.Cursor{At: r.data.cursorAt(r.data.orders - pageLimit - 1), ID: uuid.Nil}
	var fl, ll []time.Duration
	buf := new(bytes.Buffer)
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		for _, c := range []*paging.Cursor{nil, lastCur} {
			t := time.Now()
			next, err := r.page(ctx, c, buf)
			lat := time.Since(t)
			switch {
			case err != nil:
				return first, last, err
			case c == nil && next == nil:
				return first, last, errors.New("bench: the first page has no next_cursor")
			case c != nil && next != nil:
				return first, last, errors.New("bench: the last page has a next_cursor")
			case c == nil:
				fl = append(fl, lat)
			default:
				ll = append(ll, lat)
			}
		}
	}
	first, last = Measure{Clients: 1, Ops: len(fl)}, Measure{Clients: 1, Ops: len(ll)}
	first.summarize(fl)
	last.summarize(ll)
	return first, last, nil
}

// listSQL is the SQL order.List runs for a page after a cursor, captured from GORM as it is
// about to run, so the pgbench baseline follows any change to the query.
func listSQL(ctx context.Context, dbURL string, orgID uuid.UUID) (string, error) {
	db, err := database.Open(ctx, dbURL, quietLog())
	if err != nil {
		return "", err
	}
	defer database.Close(db)
	var captured string
	capture := func(tx *gorm.DB) {
		if strings.Contains(tx.Statement.SQL.String(), "FROM orders t") {
			captured = tx.Statement.SQL.String()
		}
	}
	for _, err := range []error{
		db.Callback().Row().Before("gorm:row").Register("wdsbench:capture", capture),
		db.Callback().Query().Before("gorm:query").Register("wdsbench:capture", capture),
	} {
		if err != nil {
			return "", fmt.Errorf("bench: %w", err)
		}
	}
	q := paging.ListQuery{Scope: paging.Scope{OrgID: orgID}, Limit: pageLimit,
		Cursor: &paging.Cursor{At: time.Now(), ID: uuid.Nil}}
	if _, err := order.List(ctx, db, q); err != nil {
		return "", err
	}
	for i := 1; i <= 4; i++ {
		if !strings.Contains(captured, fmt.Sprintf("$%d", i)) || strings.Contains(captured, "$5") {
			return "", fmt.Errorf("bench: order.List no longer takes (org, cursor at, cursor id, limit) "+
				"as $1..$4; update readScript: %s", captured)
		}
	}
	return captured, nil
}

// readScript is the pgbench baseline: the list SQL with its parameters as pgbench variables. Each
// client walks like an HTTP client: a walk starts at a random position computed in a trivial query
// (no table is read), then each page's last row (\aset keeps the last row: the limit+1st, one further
// than the API's cursor, which changes nothing in the work done) is the next page's cursor.
func readScript(sql string) string {
	r := strings.NewReplacer("$1", ":org", "$2", ":updated_at", "$3", ":id", "$4", ":lim")
	return `\if :left <= 0
\set ms :t0ms - random(0, :maxstart)
SELECT CAST('epoch' AS timestamptz) + CAST(:ms AS bigint) * interval '1 millisecond' AS updated_at, CAST('` +
		uuid.Nil.String() + `' AS uuid) AS id \gset
\set left :walk
\endif
` + r.Replace(sql) + ` \aset
\set left :left - 1
`
}

// readPgbench runs the read script at the given concurrency.
func (e *env) readPgbench(ctx context.Context, r *reader, script, db string, clients int, d time.Duration) (sample, error) {
	return e.pgbench(ctx, pgbenchSpec{db: db, name: fmt.Sprintf("read-%d", clients), script: script,
		clients: clients, seconds: max(1, int(d.Round(time.Second)/time.Second)),
		defs: map[string]string{"org": r.data.orgID.String(), "t0ms": fmt.Sprint(r.data.t0.UnixMilli()),
			"maxstart": fmt.Sprint(r.maxStart()), "walk": fmt.Sprint(r.walk), "left": "0", "lim": fmt.Sprint(pageLimit + 1)}})
}

// runRead measures the list: warm-up, the main run against pgbench, first and last page, and the
// latency-against-load curve.
func (e *env) runRead(ctx context.Context, o Options, r *reader, cpu *cpuMeter, dbURL, db string) (*ReadResult, error) {
	sql, err := listSQL(ctx, dbURL, r.data.orgID)
	if err != nil {
		return nil, err
	}
	res := &ReadResult{Orders: r.data.orders, Limit: pageLimit, Walk: r.walk, Script: readScript(sql)}
	script := filepath.Join(e.dir, "read.sql")
	if err := os.WriteFile(script, []byte(res.Script), 0o644); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	seed := uint64(0)
	wdsCPU, pgCPU := map[string]float64{}, map[string]float64{}
	step := func(clients, rounds int, d time.Duration) (Measure, Measure, error) {
		per := d / time.Duration(rounds)
		m, err := alternate(rounds, cpu.metered(wdsCPU, func() (sample, error) {
			seed += 1000
			return drive(ctx, clients, per, func(c int) op { return r.walker(seed + uint64(c)) }), nil
		}), cpu.metered(pgCPU, func() (sample, error) { return e.readPgbench(ctx, r, script, db, clients, per) }))
		if err != nil {
			return Measure{}, Measure{}, err
		}
		return m[0], m[1], nil
	}
	e.logf("read: warm-up, %d clients, %s", o.Clients, o.Warmup)
	if _, _, err := step(o.Clients, 1, o.Warmup); err != nil {
		return nil, err
	}
	e.logf("read: %d clients, %s each for wds and pgbench in %d alternating rounds", o.Clients, o.Duration, o.Rounds)
	clear(wdsCPU)
	clear(pgCPU)
	if res.WDS, res.PGBench, err = step(o.Clients, o.Rounds, o.Duration); err != nil {
		return nil, err
	}
	res.CPUPerPage, res.CPUPerPgbenchTx = perOp(wdsCPU, res.WDS.Ops), perOp(pgCPU, res.PGBench.Ops)
	res.ThroughputRatio = ratio(res.WDS.PerSecond, res.PGBench.PerSecond)
	e.logf("read: first and last page, 1 client, %s", o.PageCompare)
	if res.FirstPage, res.LastPage, err = r.firstAndLast(ctx, o.PageCompare); err != nil {
		return nil, err
	}
	res.LastFirstRatio = ratio(res.LastPage.P50Ms, res.FirstPage.P50Ms)
	for _, c := range o.CurveClients {
		e.logf("read: curve, %d clients, %s each", c, o.CurveStep)
		w, p, err := step(c, 1, o.CurveStep)
		if err != nil {
			return nil, err
		}
		res.Curve = append(res.Curve, CurvePoint{Clients: c, WDS: w, PGBench: p})
	}
	return res, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
