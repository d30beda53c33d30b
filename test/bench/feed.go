package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/schollz/progressbar/v3"
)

// FeedResult is the event feed line: consumers following next through a deep history and polling at
// its end, each beside pgbench running the page SQL the feed runs, and the lag from an event's
// commit to a consumer's first sight of it under a create load. It carries its own header: `-only
// feed` measures it apart from the run's other lines.
type FeedResult struct {
	StartedAt   time.Time `json:"started_at"`
	Source      string    `json:"source"`
	LoadStart   string    `json:"loadavg_at_start"`
	LoadEnd     string    `json:"loadavg_at_end"`
	Events      int       `json:"events"`
	LoadSeconds float64   `json:"load_seconds"`
	Limit       int       `json:"limit"`
	Walk        int       `json:"walk_pages"`
	// WDS and PGBench follow next from random depths; Poll* poll at the end, where nothing is new.
	WDS             Measure `json:"wds"`
	PGBench         Measure `json:"pgbench"`
	ThroughputRatio float64 `json:"throughput_ratio"`
	PollWDS         Measure `json:"poll_wds"`
	PollPGBench     Measure `json:"poll_pgbench"`
	PollRatio       float64 `json:"poll_throughput_ratio"`
	// CPU milliseconds per page (wds) and per transaction (pgbench), by process, following next.
	CPUPerPage      map[string]float64 `json:"cpu_ms_per_page"`
	CPUPerPgbenchTx map[string]float64 `json:"cpu_ms_per_pgbench_tx"`
	Lag             FeedLag            `json:"lag"`
	// Script and PollScript are the pgbench scripts; Defs and PollDefs their variables (pgbench -D).
	Script     string            `json:"pgbench_script"`
	Defs       map[string]string `json:"pgbench_defs"`
	PollScript string            `json:"pgbench_poll_script"`
	PollDefs   map[string]string `json:"pgbench_poll_defs"`
}

// feedHistory is the feed line's org: Events events loaded in one transaction (Xact), event i
// created at t0 + i ms, so both load generators compute the position before any event without a
// lookup (start).
type feedHistory struct {
	orgID   uuid.UUID
	t0      time.Time
	events  int
	xact    uint64
	firstID uuid.UUID
}

// feedTemplate is a real event of the create the load copies: its type, store, body, id and time.
type feedTemplate struct {
	Type    string
	StoreID *uuid.UUID
	Body    string
	ID, At  string
}

// feedStartID orders before every event id of the same transaction and time: a position needs a
// non-nil id, and the loaded events' random ids are all above it.
var feedStartID = uuid.MustParse("00000000-0000-0000-0000-000000000001")

func (h *feedHistory) at(i int) time.Time { return h.t0.Add(time.Duration(i) * time.Millisecond) }

// start is the iterator right before event i.
func (h *feedHistory) start(i int) string { return feedIterator(h.xact, h.at(i), feedStartID) }

// maxStart is the last event a walk may start at so that walk pages never reach the end (pgbench's
// walk advances limit+1 events a page, see feedScripts).
func (h *feedHistory) maxStart(walk int) int { return h.events - walk*(pageLimit+1) - 1 }

// feedIterator encodes a position as the feed hands it out (internal/feed's iterator, version 1):
// opaque to consumers, but the load generators start walks at random depths without a lookup.
// checkIterator holds it to what the API hands out.
func feedIterator(xact uint64, at time.Time, id uuid.UUID) string {
	raw, _ := json.Marshal(struct { // a struct of strings and integers always encodes
		V int    `json:"v"`
		X string `json:"x"`
		A string `json:"a"`
		I string `json:"i"`
		T int64  `json:"t"`
	}{1, strconv.FormatUint(xact, 10), at.UTC().Format(time.RFC3339Nano), id.String(), at.Unix()})
	return base64.RawURLEncoding.EncodeToString(raw)
}

// feedPhase loads the feed's history and measures following it and polling at its end against
// pgbench, then the lag from commit to feed under a create load.
func (e *env) feedPhase(ctx context.Context, o Options, s *stack) (*FeedResult, error) {
	res := &FeedResult{StartedAt: time.Now().UTC(), Source: e.source, LoadStart: loadavg(), Events: o.FeedEvents,
		Limit: pageLimit, Walk: o.Walk}
	r, err := e.prepareFeed(ctx, o, s, res)
	if err != nil {
		return nil, err
	}
	if err := e.runFeed(ctx, o, r, s, res); err != nil {
		return nil, err
	}
	e.logf("feed: lag from commit to a consumer, %d clients creating orders for %s", o.Clients, o.Duration)
	if res.Lag, err = e.feedLag(ctx, o, s); err != nil {
		return nil, err
	}
	e.logf("feed: lag p50 %.0f ms, p99 %.0f ms, max %.0f ms; %d of %d events seen, %d duplicates",
		res.Lag.P50Ms, res.Lag.P99Ms, res.Lag.MaxMs, res.Lag.Seen, res.Lag.Events, res.Lag.Duplicates)
	res.LoadEnd = loadavg()
	return res, nil
}

// prepareFeed makes the feed org, loads its history from one real create's events, mints its read
// keys and checks that the load generators' iterators are the API's.
func (e *env) prepareFeed(ctx context.Context, o Options, s *stack, res *FeedResult) (*feedReader, error) {
	t, err := newTenant(ctx, s.db, "Feed benchmark")
	if err != nil {
		return nil, err
	}
	tmpl, err := feedTemplates(ctx, s, t)
	if err != nil {
		return nil, err
	}
	h := &feedHistory{orgID: t.orgID, events: o.FeedEvents}
	h.t0 = time.Now().UTC().Truncate(time.Millisecond).Add(-time.Duration(h.events+1) * time.Millisecond)
	e.logf("feed: loading %d events", h.events)
	start := time.Now()
	if err := loadFeed(ctx, s, h, tmpl, o.Log); err != nil {
		return nil, err
	}
	res.LoadSeconds = round1(time.Since(start).Seconds())
	keys, err := mintReadKeys(ctx, s.db, t, o.ReadKeys)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	r := &feedReader{base: s.base, client: client, keys: keys, hist: h, walk: o.Walk}
	return r, r.checkIterator(ctx)
}

// feedTemplates creates one order through the Integration API, as the ingest load does, and
// returns the events it wrote: the history repeats them, so its pages are as heavy as real ones.
func feedTemplates(ctx context.Context, s *stack, t *tenant) ([]feedTemplate, error) {
	keys, err := mintIntegrationKeys(ctx, s.db, s.box, t, 1)
	if err != nil {
		return nil, err
	}
	g := &ingester{base: s.base, client: http.DefaultClient, keys: keys, prefix: "feed-template-", payment: true}
	if _, err := g.create(ctx); err != nil {
		return nil, err
	}
	var out []feedTemplate
	err = s.db.WithContext(ctx).Raw(`SELECT type, store_id, body::text AS body, id::text AS id, body ->> 'created_at' AS at
		FROM events WHERE org_id = ? ORDER BY xact_id, created_at, id`, t.orgID).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("bench: the feed's template events: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: a create wrote no events")
	}
	return out, nil
}

// loadFeed writes the history with COPY, in one transaction: the events share its xact_id and
// follow each other by their times, so a page reads the same index ranges as in a history of many
// transactions. They are written dispatched, so the relay leaves them be, then vacuumed.
func loadFeed(ctx context.Context, s *stack, h *feedHistory, tmpl []feedTemplate, progress io.Writer) error {
	bar := progressbar.NewOptions(h.events, progressbar.OptionSetWriter(progress),
		progressbar.OptionSetDescription("loading events"), progressbar.OptionShowCount(),
		progressbar.OptionThrottle(250*time.Millisecond), progressbar.OptionOnCompletion(func() { fmt.Fprintln(progress) }))
	h.firstID = uuid.New()
	cols := []string{"id", "org_id", "store_id", "type", "body", "created_at", "dispatched_at"}
	err := copyRows(ctx, s.dbURL, "events", cols, h.events, func(i int) []any {
		id := h.firstID
		if i > 0 {
			id = uuid.New()
		}
		tm, at := tmpl[i%len(tmpl)], h.at(i)
		body := strings.NewReplacer(tm.ID, id.String(), tm.At, at.Format(time.RFC3339Nano)).Replace(tm.Body)
		return []any{id, h.orgID, tm.StoreID, tm.Type, body, at, at}
	}, bar)
	if err != nil {
		return err
	}
	_ = bar.Finish()
	if err := execute(ctx, s.dbURL, "settle the feed", "VACUUM (ANALYZE) events", "CHECKPOINT"); err != nil {
		return err
	}
	var xact string
	if err := s.db.WithContext(ctx).Raw("SELECT xact_id::text FROM events WHERE id = ?", h.firstID).Scan(&xact).Error; err != nil {
		return fmt.Errorf("bench: the history's transaction: %w", err)
	}
	h.xact, err = strconv.ParseUint(xact, 10, 64)
	if err != nil {
		return fmt.Errorf("bench: the history's transaction %q: %w", xact, err)
	}
	return nil
}

// runFeed measures following next and then polling at the end, each against pgbench running the
// same page in alternating rounds, as the read line does.
func (e *env) runFeed(ctx context.Context, o Options, r *feedReader, s *stack, res *FeedResult) error {
	page, err := e.feedScripts(ctx, s.dbURL, r.hist, res)
	if err != nil {
		return err
	}
	if err := e.feedWalk(ctx, o, r, s, page, res); err != nil {
		return err
	}
	e.logf("feed: polling at the end, %d clients, %s each for wds and pgbench in %d alternating rounds", o.Clients, o.Duration, o.Rounds)
	m, err := e.feedPoll(ctx, o, r, s, page, res)
	if err != nil {
		return err
	}
	res.PollWDS, res.PollPGBench, res.PollRatio = m[0], m[1], ratio(m[0].PerSecond, m[1].PerSecond)
	return nil
}

// feedWalk measures following next from random depths after a warm-up, with the CPU of each side.
func (e *env) feedWalk(ctx context.Context, o Options, r *feedReader, s *stack, page map[string]string, res *FeedResult) error {
	h := r.hist
	res.Defs = withDefs(page, map[string]string{"t0ms": fmt.Sprint(h.t0.UnixMilli()), "maxstart": fmt.Sprint(h.maxStart(r.walk)),
		"walk": fmt.Sprint(r.walk), "left": "0", "xact": strconv.FormatUint(h.xact, 10), "startid": feedStartID.String()})
	seed := uint64(0)
	wdsCPU, pgCPU := map[string]float64{}, map[string]float64{}
	walk := func(rounds int, d time.Duration) ([]Measure, error) {
		per := d / time.Duration(rounds)
		return alternate(rounds, s.cpu.metered(wdsCPU, func() (sample, error) {
			seed += 1000
			return drive(ctx, o.Clients, per, func(c int) op { return r.walker(seed + uint64(c)) }), nil
		}), s.cpu.metered(pgCPU, func() (sample, error) { return e.feedPgbench(ctx, "feedwalk", feedWalkFile, res.Defs, o.Clients, per) }))
	}
	e.logf("feed: warm-up following next, %d clients, %s", o.Clients, o.Warmup)
	if _, err := walk(1, o.Warmup); err != nil {
		return err
	}
	e.logf("feed: following next, %d clients, %s each for wds and pgbench in %d alternating rounds", o.Clients, o.Duration, o.Rounds)
	clear(wdsCPU)
	clear(pgCPU)
	m, err := walk(o.Rounds, o.Duration)
	if err != nil {
		return err
	}
	res.WDS, res.PGBench, res.ThroughputRatio = m[0], m[1], ratio(m[0].PerSecond, m[1].PerSecond)
	res.CPUPerPage, res.CPUPerPgbenchTx = perOp(wdsCPU, res.WDS.Ops), perOp(pgCPU, res.PGBench.Ops)
	return nil
}

// feedPoll measures polling at the end: wds's consumers from the iterator a page that reached the
// end handed out, pgbench's from the horizon of the same moment, each following its pages' horizon.
func (e *env) feedPoll(ctx context.Context, o Options, r *feedReader, s *stack, page map[string]string, res *FeedResult) ([]Measure, error) {
	var below string
	if err := s.db.WithContext(ctx).Raw("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").Scan(&below).Error; err != nil {
		return nil, fmt.Errorf("bench: the horizon: %w", err)
	}
	res.PollDefs = withDefs(page, map[string]string{"below": below, "zeroat": time.Time{}.Format(time.RFC3339Nano), "zeroid": uuid.Nil.String()})
	per := o.Duration / time.Duration(o.Rounds)
	return alternate(o.Rounds, func() (sample, error) {
		return drive(ctx, o.Clients, per, func(int) op { return r.poller() }), nil
	}, func() (sample, error) {
		return e.feedPgbench(ctx, "feedpoll", feedPollFile, res.PollDefs, o.Clients, per)
	})
}

// feedPgbench runs one of the feed's scripts at the given concurrency.
func (e *env) feedPgbench(ctx context.Context, name, file string, defs map[string]string, clients int, d time.Duration) (sample, error) {
	return e.pgbench(ctx, pgbenchSpec{db: "wds", name: name, script: filepath.Join(e.dir, file), clients: clients,
		seconds: max(1, int(d.Round(time.Second)/time.Second)), defs: defs})
}

// withDefs is the page's constants with a script's own variables.
func withDefs(page, own map[string]string) map[string]string {
	out := maps.Clone(page)
	maps.Copy(out, own)
	return out
}

// feedHeader gives the feed lines' own run conditions: `-only feed` measures them apart.
func feedHeader(b *bytes.Buffer, r *FeedResult) {
	if r != nil {
		fmt.Fprintf(b, "The event feed lines: run of %s, load average %s at their start, %s at their end; code measured: %s.\n\n",
			r.StartedAt.Format("2006-01-02 15:04 MST"), r.LoadStart, r.LoadEnd, r.Source)
	}
}

// feedRows are the feed line's rows of the results table. The lag's target is the issue's: an
// event is in the feed within a second of its commit when nothing holds it back.
func feedRows(r *FeedResult) []row {
	if r == nil {
		return nil
	}
	l := r.Lag
	return []row{
		{fmt.Sprintf("Feed throughput following next through %d events, %d clients", r.Events, r.WDS.Clients),
			fmt.Sprintf("%.0f pages/s", r.WDS.PerSecond), fmt.Sprintf("%.0f tx/s (pgbench, same SQL)", r.PGBench.PerSecond),
			fmt.Sprintf("%.2f", r.ThroughputRatio), "", ""},
		{"Feed p50 / p99 following next", fmt.Sprintf("%.1f / %.1f ms", r.WDS.P50Ms, r.WDS.P99Ms),
			fmt.Sprintf("%.1f / %.1f ms", r.PGBench.P50Ms, r.PGBench.P99Ms), fmt.Sprintf("%.2f", ratio(r.WDS.P99Ms, r.PGBench.P99Ms)), "", ""},
		{fmt.Sprintf("Feed throughput polling at its end, %d clients", r.PollWDS.Clients),
			fmt.Sprintf("%.0f pages/s, p50 / p99 %.1f / %.1f ms", r.PollWDS.PerSecond, r.PollWDS.P50Ms, r.PollWDS.P99Ms),
			fmt.Sprintf("%.0f tx/s (pgbench, same SQL), p50 / p99 %.1f / %.1f ms", r.PollPGBench.PerSecond, r.PollPGBench.P50Ms, r.PollPGBench.P99Ms),
			fmt.Sprintf("%.2f", r.PollRatio), "", ""},
		{"Feed errors", fmt.Sprintf("%d of %d following, %d of %d polling", r.WDS.Errors, r.WDS.Ops, r.PollWDS.Errors, r.PollWDS.Ops),
			fmt.Sprintf("%d of %d, %d of %d", r.PGBench.Errors, r.PGBench.Ops, r.PollPGBench.Errors, r.PollPGBench.Ops), "", "0",
			met(r.WDS.Errors == 0 && r.PollWDS.Errors == 0)},
		{fmt.Sprintf("Feed lag from an event's commit to a polling consumer, under %.0f creates/s (%d clients)", l.CreatesPerSecond, l.Clients),
			fmt.Sprintf("p50 %.0f / p99 %.0f / max %.0f ms (%.0f ms pause after a page at the end)", l.P50Ms, l.P99Ms, l.MaxMs, l.PauseMs),
			"", "", "within 1 s", met(l.Events > 0 && l.MaxMs <= 1000)},
		{"Feed lag: events seen", fmt.Sprintf("%d of %d, %d duplicates, in %d pages", l.Seen, l.Events, l.Duplicates, l.Pages),
			"", "", "each exactly once", met(l.Events > 0 && l.Seen == l.Events && l.Duplicates == 0)},
	}
}
