package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/workflows/contract"
)

// NoisyOptions size the noisy-neighbour line (issue 39): org A's history and what A does during the
// measure, and org B's paced load.
type NoisyOptions struct {
	Rows       int           // A's delivery rows, written directly (Dropped of them dropped chains)
	Dropped    int           // A's dropped chains on its outage endpoint
	Recover    int           // the newest of them A recovers during the measure
	Held       int           // events A commits to its endpoint limited to 1 a second
	Searches   int           // A's concurrent outcome searches, each in a loop
	Members    int           // A's members each looping the delivery log and the console's overview
	Duration   time.Duration // B's quiet window and B's noisy window, each
	CreateRate float64       // B's order creates a second
	ReadRate   float64       // B's Read API pages a second
}

// NoisyResult is org B measured alone (quiet) and beside org A's recovery, held backlog and searches
// (noisy) in the same run, with A's recovery checked for exactly-once and for batches that do not
// grow as its cursor moves.
type NoisyResult struct {
	StartedAt  time.Time `json:"started_at"`
	Source     string    `json:"source"`
	LoadStart  string    `json:"loadavg_at_start"`
	LoadEnd    string    `json:"loadavg_at_end"`
	Rows       int       `json:"a_delivery_rows"`
	Dropped    int       `json:"a_dropped_chains"`
	HeldEvents int       `json:"a_held_events_at_rate_limit_1"`
	Seconds    float64   `json:"window_seconds"`
	Quiet      NoisySide `json:"b_quiet"`
	Noisy      NoisySide `json:"b_noisy"`
	// QuietAfter is B alone again once A's recovery is over: the baseline is both quiet windows, so a
	// machine that got busier or quieter during the run moves it as it moved the noisy window.
	QuietAfter NoisySide `json:"b_quiet_after"`
	// Ratios of B's p99s, noisy over the mean of the two quiet windows' (target <= 1.5).
	CreateRatio  float64 `json:"b_create_p99_ratio"`
	PageRatio    float64 `json:"b_page_p99_ratio"`
	ReceiptRatio float64 `json:"b_order_to_receipt_p99_ratio"`
	Search       Measure `json:"a_outcome_search"`
	// Member is A's members' reads of the delivery log and the overview; MemberPaced of them were
	// refused by A's pace (429), which is what the pace is for.
	Member      Measure         `json:"a_member_reads"`
	MemberPaced int64           `json:"a_member_reads_paced"`
	Recovery    NoisyRecovery   `json:"a_recovery"`
	Batches     []float64       `json:"a_batch_ms"`
	Batch       NoisyBatchRatio `json:"a_batch_first_last"`
}

// NoisySide is B's figures of one window: the create's answer, the page's answer, and each order's
// time from the create's answer to the receiver's first receipt of its order.created.
type NoisySide struct {
	Creates RatePoint `json:"creates"`
	Pages   Measure   `json:"pages"`
	// CPUSeconds is what each process of the stack spent during the window, so the noisy window's
	// extra cost shows where it went, and Waits what was waited on.
	CPUSeconds map[string]float64 `json:"cpu_seconds"`
	Waits      NoisyWaits         `json:"waits"`
}

// NoisyRecovery is A's recovery checked chain by chain: every one of the newest Chains dropped chains
// re-fired by exactly one dispatch, delivered by exactly one successful attempt, received once.
type NoisyRecovery struct {
	Chains      int     `json:"chains"`
	Dispatches  int     `json:"dispatches"`
	Distinct    int     `json:"distinct_refired_deliveries"`
	InWindow    int     `json:"dispatches_of_the_newest_chains"`
	Succeeded   int     `json:"succeeded_attempts"`
	Received    int     `json:"events_received"`
	Missing     int     `json:"missing"`
	Duplicates  int     `json:"duplicate_receipts"`
	Seconds     float64 `json:"seconds_until_all_received"`
	ExactlyOnce bool    `json:"exactly_once"`
}

// NoisyBatchRatio is the recovery's first batch against its last one that took chains, each its
// transaction's time (recoveryBatches).
type NoisyBatchRatio struct {
	FirstMs float64 `json:"first_ms"`
	LastMs  float64 `json:"last_ms"`
	Ratio   float64 `json:"last_first_ratio"`
}

// noisyLead is how long A's load runs before B's noisy window opens.
const noisyLead = 5 * time.Second

// noisyPaths are the receiver's paths of this line, apart from the other lines' so that their
// busiest seconds and arrivals stay theirs.
const (
	noisyOutagePath = "/noisy-outage"
	noisyHeldPath   = "/noisy-held"
	noisyBPath      = "/noisy-b"
)

// noisyPhase builds A's history and B, measures B alone, then B beside A's recovery, held backlog and
// searches, checks A's recovery once it is done, and measures B alone again.
func (e *env) noisyPhase(ctx context.Context, o Options, s *stack) (*NoisyResult, error) {
	n := o.Noisy
	res := &NoisyResult{StartedAt: time.Now().UTC(), Source: e.source, LoadStart: loadavg(), Rows: n.Rows, Dropped: n.Dropped,
		HeldEvents: n.Held, Seconds: n.Duration.Seconds()}
	s.rcv.route(noisyOutagePath, noisyHeldPath, noisyBPath)
	a, outage, err := e.hookTenant(ctx, s, "Noisy neighbour A", noisyOutagePath, "--rate-limit", fmt.Sprint(recoveryRateLimit))
	if err != nil {
		return nil, err
	}
	if err := e.addEndpoint(ctx, s, a, noisyHeldPath, "--rate-limit", "1"); err != nil {
		return nil, err
	}
	e.logf("noisy neighbour: writing org A's %d delivery rows, %d of them dropped chains", n.Rows, n.Dropped)
	since, err := writeOutage(ctx, s, a, outage, n)
	if err != nil {
		return nil, err
	}
	if err := writeWeek(ctx, s, a); err != nil {
		return nil, err
	}
	// Written at once, each event's row has a dead version (the outcome's trigger updated it) that
	// months of history would long have had vacuumed: a search would walk them all.
	if err := execute(ctx, s.dbURL, "vacuum", "VACUUM (ANALYZE) events, webhook_deliveries"); err != nil {
		return nil, err
	}
	b, err := e.newNoisyB(ctx, o, s)
	if err != nil {
		return nil, err
	}
	e.logf("noisy neighbour: org B alone for %s", n.Duration)
	if res.Quiet, err = b.window(ctx, n); err != nil {
		return nil, err
	}
	e.logf("noisy neighbour: org B beside A's recovery of %d chains, %d held events, %d searches and %d members reading, %s",
		n.Recover, n.Held, n.Searches, n.Members, n.Duration)
	if _, err := commitEvents(ctx, s, a, n.Held); err != nil {
		return nil, err
	}
	start := time.Now()
	recID, err := recoverEndpoint(ctx, s.base, a.token, outage, since)
	if err != nil {
		return nil, err
	}
	member, err := newNoisyMember(ctx, s.base, a, outage)
	if err != nil {
		return nil, err
	}
	searches, members := make(chan sample, 1), make(chan sample, 1)
	go func() { searches <- drive(ctx, n.Searches, noisyLead+n.Duration, outcomeSearch(s.base, a)) }()
	go func() { members <- drive(ctx, n.Members, noisyLead+n.Duration, member.op) }()
	// B's window measures B beside A's recovery, held backlog and searches running, not beside the
	// first seconds of A's setup: the held events committed in one statement, started at once.
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(noisyLead):
	}
	res.Noisy, err = b.window(ctx, n)
	res.Search, res.Member = (<-searches).measure(), (<-members).measure()
	if err != nil {
		return nil, err
	}
	res.MemberPaced = member.paced.Load()
	if res.Recovery, err = checkRecovery(ctx, s, recID, n.Recover, since, start); err != nil {
		return nil, err
	}
	if res.Batches, err = recoveryBatches(ctx, s, recID); err != nil {
		return nil, err
	}
	res.Batch = firstLast(res.Batches)
	if err := e.waitIdle(ctx, s); err != nil {
		return nil, err
	}
	e.logf("noisy neighbour: org B alone again for %s", n.Duration)
	if res.QuietAfter, err = b.window(ctx, n); err != nil {
		return nil, err
	}
	q, qa, nz := res.Quiet, res.QuietAfter, res.Noisy
	res.CreateRatio = ratio(nz.Creates.AckP99Ms, (q.Creates.AckP99Ms+qa.Creates.AckP99Ms)/2)
	res.PageRatio = ratio(nz.Pages.P99Ms, (q.Pages.P99Ms+qa.Pages.P99Ms)/2)
	res.ReceiptRatio = ratio(nz.Creates.P99Ms, (q.Creates.P99Ms+qa.Creates.P99Ms)/2)
	e.logf("noisy neighbour: B's p99 noisy/quiet: create %.2f, page %.2f, order to receipt %.2f; A's %d searches p99 %.1f ms; "+
		"A's members' %d reads p99 %.1f ms, %d paced; "+
		"recovery exactly once %v (%d dispatches, %d received, %d duplicates) in %.0f s; batch last/first %.2f (%.1f / %.1f ms)",
		res.CreateRatio, res.PageRatio, res.ReceiptRatio, res.Search.Ops, res.Search.P99Ms,
		res.Member.Ops, res.Member.P99Ms, res.MemberPaced, res.Recovery.ExactlyOnce,
		res.Recovery.Dispatches, res.Recovery.Received, res.Recovery.Duplicates, res.Recovery.Seconds,
		res.Batch.Ratio, res.Batch.LastMs, res.Batch.FirstMs)
	res.LoadEnd = loadavg()
	return res, nil
}

// addEndpoint gives the tenant another endpoint for order.created at path of the receiver.
func (e *env) addEndpoint(ctx context.Context, s *stack, t *tenant, path string, extra ...string) error {
	environ := e.wdsEnv(s.dbURL, "WDS_WEBHOOK_ALLOW_PRIVATE=true")
	_, err := e.runWDS(ctx, environ, append([]string{"admin", "endpoint", "create", "--org", t.orgID.String(),
		"--actor", t.ownerID.String(), "--url", s.rcv.srv.URL + path, "--events", "order.created"}, extra...)...)
	return err
}

// outageChunk is the rows one statement writes: the outcome trigger reads a statement's events at
// once, and a million in one would hold the whole batch in memory.
const outageChunk = 50_000

// writeOutage writes A's history on its outage endpoint, as the recovery line writes its drops:
// succeeded chains four hours ago, the older dropped chains three hours ago, and the newest
// n.Recover dropped chains 40 minutes ago. It returns the time between the two groups of drops, the
// since of a recovery that takes exactly the newest.
func writeOutage(ctx context.Context, s *stack, t *tenant, ep uuid.UUID, n NoisyOptions) (time.Time, error) {
	groups := []struct {
		rows    int
		dropped bool
		ago     string
	}{{n.Rows - n.Dropped, false, "4 hours"}, {n.Dropped - n.Recover, true, "3 hours"}, {n.Recover, true, "50 minutes"}}
	for _, g := range groups {
		for done := 0; done < g.rows; done += outageChunk {
			if err := writeHistory(ctx, s, t, ep, min(outageChunk, g.rows-done), done, g.dropped, g.ago); err != nil {
				return time.Time{}, err
			}
		}
	}
	var since time.Time
	err := s.db.WithContext(ctx).Raw("SELECT now() - interval '2 hours'").Scan(&since).Error
	return since, err
}

// writeWeek counts attempts in every minute of the last 8 days on each of the tenant's endpoints, as
// an org busy all week has them, and folds those older than the health's day into hours, as the
// worker's hourly retention job keeps them: the overview reads that many rows whatever its log
// holds. The history writeHistory wrote is counted from the log itself.
func writeWeek(ctx context.Context, s *stack, t *tenant) error {
	err := s.db.WithContext(ctx).Exec(`INSERT INTO webhook_endpoint_minutes AS m (endpoint_id, org_id, minute, succeeded, failed, dropped)
		SELECT d.endpoint_id, d.org_id, date_trunc('minute', d.attempted_at), count(*) FILTER (WHERE d.status = 'succeeded'),
			count(*) FILTER (WHERE d.status <> 'succeeded'), count(*) FILTER (WHERE d.status = 'dropped')
		FROM webhook_deliveries d WHERE d.org_id = ? GROUP BY 1, 2, 3
		ON CONFLICT (endpoint_id, minute) DO UPDATE SET succeeded = excluded.succeeded, failed = excluded.failed, dropped = excluded.dropped`,
		t.orgID).Error
	if err == nil {
		err = s.db.WithContext(ctx).Exec(`INSERT INTO webhook_endpoint_minutes (endpoint_id, org_id, minute, succeeded, failed)
			SELECT e.id, e.org_id, m, 60, 1 FROM webhook_endpoints e,
				generate_series(date_trunc('minute', now() - interval '8 days'), now(), interval '1 minute') m
			WHERE e.org_id = ? ON CONFLICT DO NOTHING`, t.orgID).Error
	}
	if err == nil {
		_, err = delivery.FoldMinutes(ctx, s.db)
	}
	if err != nil {
		return fmt.Errorf("bench: write the week's minutes: %w", err)
	}
	return nil
}

// writeHistory writes n events of the tenant, already dispatched, each with one chain's last
// attempt on the endpoint: succeeded at attempt 1, or dropped at attempt 5 after a 500. The events
// follow each other by a microsecond from ago (offset of the group's earlier chunks).
func writeHistory(ctx context.Context, s *stack, t *tenant, ep uuid.UUID, n, offset int, dropped bool, ago string) error {
	attempt, status, code, cause := 1, "succeeded", 200, ""
	if dropped {
		attempt, status, code, cause = 5, "dropped", 500, "receiver answered 500"
	}
	err := s.db.WithContext(ctx).Exec(`WITH e AS (
			SELECT gen_random_uuid() AS id, gen_random_uuid() AS order_id,
				now() - ?::interval + (? + i) * interval '1 microsecond' AS at
			FROM generate_series(1, ?) AS i),
		ev AS (
			INSERT INTO events (id, org_id, store_id, type, body, created_at, dispatched_at)
			SELECT e.id, ?::uuid, ?::uuid, 'order.created', json_build_object('id', e.id, 'type', 'order.created',
				'created_at', e.at, 'org_id', ?::uuid, 'store_id', ?::uuid,
				'data', json_build_object('id', e.order_id, 'object', 'order')), e.at, e.at
			FROM e RETURNING id, created_at)
		INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt,
			status, response_status, error, attempted_at)
		SELECT gen_random_uuid(), ?::uuid, ev.id, ?::uuid, 'order.created', gen_random_uuid(), ? || ev.id, ?,
			?, ?, ?, ev.created_at + interval '10 minutes'
		FROM ev`, ago, offset, n, t.orgID, t.storeID, t.orgID, t.storeID, t.orgID, ep,
		strings.TrimSuffix(contract.EventWorkflowID(uuid.Nil), uuid.Nil.String()), attempt, status, code, cause).Error
	if err != nil {
		return fmt.Errorf("bench: write %d %s chains: %w", n, status, err)
	}
	return nil
}

// noisyB is org B's load: paced creates whose order.created its receiver times, and paced pages.
type noisyB struct {
	cpu    *cpuMeter
	waits  *waitMeter
	rcv    *receiver
	create *ingester
	read   *reader
}

func (e *env) newNoisyB(ctx context.Context, o Options, s *stack) (*noisyB, error) {
	n := o.Noisy
	t, _, err := e.hookTenant(ctx, s, "Noisy neighbour B", noisyBPath)
	if err != nil {
		return nil, err
	}
	g, err := newIngester(ctx, s.db, s.box, t, s.base, "noisy-b-", int(3*n.CreateRate*n.Duration.Seconds())+100, false)
	if err != nil {
		return nil, err
	}
	keys, err := mintReadKeys(ctx, s.db, t, int(3*n.ReadRate*n.Duration.Seconds())/readKeyBudget+2)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	waits := &waitMeter{db: s.db, metrics: map[string]string{"serve": s.metrics[0], "worker": s.metrics[1]}}
	return &noisyB{cpu: s.cpu, waits: waits, rcv: s.rcv, create: g, read: &reader{base: s.base, client: client, keys: keys}}, nil
}

// window runs B's creates and pages side by side for the window and waits for the orders' events.
func (b *noisyB) window(ctx context.Context, n NoisyOptions) (NoisySide, error) {
	before := b.cpu.snapshot()
	side := NoisySide{CPUSeconds: map[string]float64{}}
	var err error
	side.Waits, err = b.waits.measure(ctx, func() {
		pages := make(chan sample, 1)
		go func() { pages <- pacedSample(ctx, n.ReadRate, n.Duration, b.firstPage) }()
		side.Creates = paced(ctx, n.CreateRate, n.Duration, b.rcv, b.create.create)
		side.Pages = (<-pages).measure()
	})
	for name, ms := range b.cpu.snapshot() {
		side.CPUSeconds[name] = round1((ms - before[name]) / 1000)
	}
	return side, err
}

// firstPage reads B's newest orders, the page a member opens first.
func (b *noisyB) firstPage(ctx context.Context) error {
	_, err := b.read.page(ctx, nil, new(bytes.Buffer))
	return err
}
