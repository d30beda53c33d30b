package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"wds/internal/dev/temporaldev"
	"wds/internal/platform/freeport"
	"wds/models"
	"wds/workflows/contract"
)

// ScaleResult is delivery measured on its own, without the order create: events already committed
// in bulk, delivered by wds (relay and worker) beside a bare workflow and POST started per event in
// the same run; a backlog committed while Temporal was away; chains waiting on the ladder's timers;
// and what a failed attempt and its retry add to a delivery.
// Its own run conditions are kept, since `wdsbench -only scale` measures it apart from the rest.
type ScaleResult struct {
	StartedAt time.Time      `json:"started_at"`
	Source    string         `json:"source"`
	LoadStart string         `json:"loadavg_at_start"`
	LoadEnd   string         `json:"loadavg_at_end"`
	Delivery  DeliveryOnly   `json:"delivery_only"`
	Recovery  RecoveryRun    `json:"recovery"`
	Backlog   BacklogDrain   `json:"backlog_drain"`
	Limited   LimitedBacklog `json:"backlog_rate_limited"`
	Waiting   WaitingChains  `json:"waiting_chains"`
	Retry     *RetryCost     `json:"retry,omitempty"` // nil in results of runs before the line
	// Cluster is the delivery-only line on the Temporal server built from source on PostgreSQL, once
	// for each history shard count, in the same run as Delivery's on the dev server.
	Cluster []DeliveryOnly `json:"cluster,omitempty"`
}

// DeliveryOnly compares the drain of committed events, round by round, wds against the bare workflow.
type DeliveryOnly struct {
	EventsPerRound int       `json:"events_per_round"`
	WDS            []Drained `json:"wds_rounds"`
	Bare           []Drained `json:"bare_rounds"`
	WDSRate        float64   `json:"wds_rate"`
	BareRate       float64   `json:"bare_rate"`
	Ratio          float64   `json:"ratio"`
	// Temporal is the server measured on (kind, persistence, version); HistoryShards its shard count,
	// read from the cluster's own shards table (the dev server has one).
	Temporal      string `json:"temporal"`
	HistoryShards int    `json:"history_shards"`
	// CPU milliseconds per event, by process, over every round of the side; Temporal's is the server's
	// and, on the cluster, its PostgreSQL backends' ("temporal postgres").
	WDSCPU         map[string]float64 `json:"wds_cpu_ms_per_event"`
	BareCPU        map[string]float64 `json:"bare_cpu_ms_per_event"`
	WDSTemporalCPU float64            `json:"wds_temporal_cpu_ms_per_event"`
	// CommitPostgres is the part of WDSCPU's "postgres" that the benchmark's own commits of the
	// rounds' events took (an order's create writes its events, not its delivery): DeliveryPostgres
	// is the rest. 0 in results of runs before it was measured.
	CommitPostgres  float64 `json:"bench_commit_postgres_ms_per_event"`
	BareTemporalCPU float64 `json:"bare_temporal_cpu_ms_per_event"`
	// The requests to Temporal per event during the side's rounds: wds worker's and the bare worker's.
	WDSAsks  Asks `json:"wds_requests"`
	BareAsks Asks `json:"bare_requests"`
	// The history of the last round's first event, and of its bare workflow.
	WDSHistory  History `json:"wds_history"`
	BareHistory History `json:"bare_history"`
	// WDSDatabase is what the wds side's rounds asked of wds's database, statement by statement
	// (pg_stat_statements); nil in results of runs before it was counted.
	WDSDatabase *DatabaseCost `json:"wds_database,omitempty"`
	// LockWaits are the waits for a lock in wds's database during the rounds; nil in results of runs
	// before they were counted.
	LockWaits *LockWaits `json:"lock_waits,omitempty"`
}

// DeliveryPostgres is wds's PostgreSQL CPU per delivered event less the benchmark's commit of it.
func (d DeliveryOnly) DeliveryPostgres() float64 {
	return round2(d.WDSCPU["postgres"] - d.CommitPostgres)
}

// Drained is one batch delivered: how many, how long from the commit (or the first start) to the
// last arrival, and at what rate.
type Drained struct {
	Events  int     `json:"events"`
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"rate"`
}

// BacklogDrain is a backlog committed while Temporal was stopped, drained once it started.
type BacklogDrain struct {
	Drained
	// SteadyRate is wds's delivery-only rate of the same run, the most it drains with Temporal up.
	SteadyRate float64 `json:"steady_rate"`
	Ratio      float64 `json:"ratio"`
}

// RecoveryRun is a recovery (docs/support.md#2-our-receiver-was-down-yesterday) of chains dropped in bulk beforehand, on an endpoint
// limited to RateLimit a second, timed from the request to the last arrival (Drained) and to the
// recovery's last start.
type RecoveryRun struct {
	Drained
	RateLimit      int     `json:"endpoint_rate_limit"`
	StartedSeconds float64 `json:"seconds_until_all_started"`
	StartedRate    float64 `json:"started_rate"`
	// BareRate is the bare workflow + POST rate of the delivery-only rounds of the same run.
	BareRate      float64 `json:"bare_rate"`
	Ratio         float64 `json:"ratio"`
	BusiestSecond int     `json:"busiest_second"`
}

// LimitedBacklog is a backlog to an endpoint with a rate limit lower than the drain would reach,
// committed while Temporal was stopped: the most POSTs the receiver saw in one second, and the rate
// of the drain against the limit.
type LimitedBacklog struct {
	Drained
	RateLimit     int     `json:"endpoint_rate_limit"`
	Delivered     int     `json:"delivered"`
	BusiestSecond int     `json:"busiest_second"`
	Ratio         float64 `json:"ratio_to_limit"`
}

// WaitingChains is chains waiting on the retry ladder's timers while their receiver answers 500.
type WaitingChains struct {
	Chains          int     `json:"chains"`
	Ladder          string  `json:"ladder"`
	WorkerPeakMB    float64 `json:"worker_peak_rss_mb"`
	TemporalPeakMB  float64 `json:"temporal_peak_rss_mb"`
	HistoryEvents   int     `json:"history_events_per_chain"`
	History         History `json:"history"`
	SecondsToWait   float64 `json:"seconds_until_all_waiting"`
	FinishSeconds   float64 `json:"seconds_from_first_retry_to_last"`
	RecoverySeconds float64 `json:"seconds_from_recovery_to_last"`
}

// scalePhase runs the measurements. The recovery runs on the stack; the backlogs and the waiting
// chains each use a Temporal server and a wds worker of their own, so the stack's worker is stopped
// first: its relay would otherwise start their events on the stack's Temporal.
func (e *env) scalePhase(ctx context.Context, o Options, s *stack) (*ScaleResult, error) {
	res := &ScaleResult{StartedAt: time.Now().UTC(), Source: e.source, LoadStart: loadavg()}
	var err error
	if res.Delivery, err = e.deliveryOnly(ctx, o, s, "dev server"); err != nil {
		return nil, err
	}
	if err := e.recoveryWorker(ctx, s); err != nil {
		return nil, err
	}
	if res.Recovery, err = e.recovery(ctx, o, s); err != nil {
		return nil, err
	}
	res.Recovery.BareRate = res.Delivery.BareRate
	res.Recovery.Ratio = ratio(res.Recovery.Rate, res.Recovery.BareRate)
	s.worker.stop()
	if res.Backlog, err = e.backlogDrain(ctx, o, s); err != nil {
		return nil, err
	}
	res.Backlog.SteadyRate = res.Delivery.WDSRate
	res.Backlog.Ratio = ratio(res.Backlog.Rate, res.Backlog.SteadyRate)
	if res.Limited, err = e.limitedBacklog(ctx, o, s); err != nil {
		return nil, err
	}
	if res.Waiting, err = e.waitingChains(ctx, o, s); err != nil {
		return nil, err
	}
	retry, err := e.retryCost(ctx, o, s)
	if err != nil {
		return nil, err
	}
	res.Retry = &retry
	res.LoadEnd = loadavg()
	return res, nil
}

// hookTenant is an org with one endpoint for order.created at path of the receiver, created with
// the extra flags of `wds admin endpoint create` and backdated an hour so that events written with
// past times (past the relay's grace) are still its events. It returns the endpoint's id too.
func (e *env) hookTenant(ctx context.Context, s *stack, name, path string, extra ...string) (*tenant, uuid.UUID, error) {
	t, err := newTenant(ctx, s.db, name)
	if err != nil {
		return nil, uuid.Nil, err
	}
	environ := e.wdsEnv(s.dbURL, "WDS_WEBHOOK_ALLOW_PRIVATE=true")
	out, err := e.runWDS(ctx, environ, append([]string{"admin", "endpoint", "create", "--org", t.orgID.String(),
		"--actor", t.ownerID.String(), "--url", s.rcv.srv.URL + path, "--events", "order.created"}, extra...)...)
	if err != nil {
		return nil, uuid.Nil, err
	}
	var ep struct {
		ID uuid.UUID `json:"id"`
	}
	if err := json.Unmarshal(out, &ep); err != nil {
		return nil, uuid.Nil, fmt.Errorf("bench: endpoint create printed %q: %w", out, err)
	}
	if err := s.db.WithContext(ctx).Exec("UPDATE webhook_endpoints SET created_at = created_at - interval '1 hour' WHERE org_id = ?",
		t.orgID).Error; err != nil {
		return nil, uuid.Nil, fmt.Errorf("bench: backdate endpoint: %w", err)
	}
	return t, ep.ID, nil
}

// commitEvents writes n order.created events of the tenant in one statement, as a burst of creates
// would leave them: undispatched, bodies of the benchmark's usual size (about 1.5 kB), each naming
// an order of its own, timed a minute ago so the relay takes them at once. It returns the order ids
// the receiver will see.
func commitEvents(ctx context.Context, s *stack, t *tenant, n int) ([]string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Raw(benchSQL+`WITH e AS (
			SELECT gen_random_uuid() AS id, gen_random_uuid() AS order_id,
				clock_timestamp() - interval '1 minute' + i * interval '1 microsecond' AS at
			FROM generate_series(1, ?) AS i)
		INSERT INTO events (id, org_id, store_id, type, body, created_at)
		SELECT e.id, ?::uuid, ?::uuid, 'order.created', json_build_object('id', e.id, 'type', 'order.created',
			'created_at', e.at, 'org_id', ?::uuid, 'store_id', ?::uuid,
			'data', json_build_object('id', e.order_id, 'object', 'order', 'note', repeat('x', 1300))), e.at
		FROM e RETURNING body->'data'->>'id'`, n, t.orgID, t.storeID, t.orgID, t.storeID).Scan(&ids).Error
	if err != nil {
		return nil, fmt.Errorf("bench: commit %d events: %w", n, err)
	}
	return ids, nil
}

// deliveryOnly alternates rounds: a batch of events committed at once and delivered by the stack's
// worker, then as many bare workflows started one after another (as the relay starts events) against
// the same receiver. Each round is timed from the commit or the first start to the last arrival, and
// the CPU and the requests to Temporal of each side are counted during its rounds only. label names
// the Temporal server in the tenant's name and the log.
func (e *env) deliveryOnly(ctx context.Context, o Options, s *stack, label string) (DeliveryOnly, error) {
	res := DeliveryOnly{EventsPerRound: o.ScaleEvents, Temporal: s.temporalDesc, HistoryShards: s.shards}
	if v, err := s.temporal.Client().WorkflowService().GetSystemInfo(ctx, &workflowservice.GetSystemInfoRequest{}); err == nil {
		res.Temporal += ", server " + v.GetServerVersion()
	}
	t, _, err := e.hookTenant(ctx, s, "Delivery-only benchmark, "+label, "/hook")
	if err != nil {
		return res, err
	}
	bc, err := bareClient(s.temporalAddr)
	if err != nil {
		return res, err
	}
	defer bc.Close()
	w, err := bareWorker(bc, s.rcv)
	if err != nil {
		return res, err
	}
	defer w.Stop()
	// The receiver keeps every arrival of the run: each server's bare workflows need ids of their own.
	slug := strings.ReplaceAll(label, " ", "-")
	wdsCPU, bareCPU := map[string]float64{}, map[string]float64{}
	var commitPostgres float64
	wdsAsks, bareAsks := map[string]float64{}, map[string]float64{}
	workerCounts := func(ctx context.Context) (map[string]float64, error) { return scrapeRequests(ctx, s.workerMetrics) }
	locks, err := watchLocks(ctx, s.db, e.cluster.LogFile())
	if err != nil {
		return res, err
	}
	if err := e.warmUp(ctx, s, t, bc, slug); err != nil {
		return res, fmt.Errorf("bench: delivery-only warm-up on the %s: %w", label, err)
	}
	if err := locks.begin(); err != nil {
		return res, err
	}
	meter, err := newDBMeter(ctx, s.db)
	if err != nil {
		return res, err
	}
	for round := range o.ScaleRounds {
		if err := e.waitIdle(ctx, s); err != nil {
			return res, err
		}
		if err := meter.start(ctx); err != nil {
			return res, err
		}
		var d Drained
		err := counted(ctx, workerCounts, wdsAsks, s.cpu.metered(wdsCPU, func() (sample, error) {
			start, before := time.Now(), s.cpu.snapshot()["postgres"]
			ids, err := commitEvents(ctx, s, t, o.ScaleEvents)
			// Nothing is delivered before the commit: what PostgreSQL spent until it is the insert's.
			commitPostgres += s.cpu.snapshot()["postgres"] - before
			if err == nil {
				d, err = drained(ctx, s.rcv, ids, start, drainLimit(o.ScaleEvents))
			}
			return sample{}, err
		}))
		if err != nil {
			return res, fmt.Errorf("bench: delivery-only wds round %d on the %s: %w", round+1, label, err)
		}
		res.WDS = append(res.WDS, d)
		if err := e.waitIdle(ctx, s); err != nil {
			return res, err
		}
		// Counted until the worker is idle: the last attempts' rows are written after their POSTs arrive.
		if err := meter.stop(ctx); err != nil {
			return res, err
		}
		err = counted(ctx, bareRequestCounts, bareAsks, s.cpu.metered(bareCPU, func() (sample, error) {
			d, err = bareBatch(ctx, bc, s.rcv, fmt.Sprintf("%s-batch%d", slug, round), o.ScaleEvents)
			return sample{}, err
		}))
		if err != nil {
			return res, fmt.Errorf("bench: delivery-only bare round %d on the %s: %w", round+1, label, err)
		}
		res.Bare = append(res.Bare, d)
		e.logf("delivery only on the %s, round %d: wds %.1f/s, bare %.1f/s", label, round+1, res.WDS[round].Rate, d.Rate)
	}
	if res.WDSHistory, err = e.firstEventHistory(ctx, s, t); err != nil {
		return res, err
	}
	if res.BareHistory, err = history(ctx, bc, fmt.Sprintf("bare-%s-batch%d-0", slug, o.ScaleRounds-1)); err != nil {
		return res, err
	}
	n := o.ScaleEvents * o.ScaleRounds
	if res.LockWaits, err = locks.stop(ctx, n); err != nil {
		return res, err
	}
	res.WDSRate, res.BareRate = pooledRate(res.WDS), pooledRate(res.Bare)
	res.Ratio = ratio(res.WDSRate, res.BareRate)
	res.WDSCPU, res.BareCPU = perOp(wdsCPU, n), perOp(bareCPU, n)
	res.CommitPostgres = round2(commitPostgres / float64(n))
	res.WDSTemporalCPU, res.BareTemporalCPU = temporalCPU(res.WDSCPU), temporalCPU(res.BareCPU)
	res.WDSAsks, res.BareAsks = asksOf(wdsAsks, n, res.WDSRate), asksOf(bareAsks, n, res.BareRate)
	res.WDSDatabase = meter.cost(n)
	return res, e.waitIdle(ctx, s)
}

// warmUpEvents are delivered by each side, unmeasured, before the rounds.
const warmUpEvents = 20

// warmUp delivers a few events through each side untimed: a fresh cluster's shards and a fresh
// worker's connections would otherwise be timed in the first round, and weigh most in a short run.
func (e *env) warmUp(ctx context.Context, s *stack, t *tenant, bc client.Client, slug string) error {
	if err := e.waitIdle(ctx, s); err != nil {
		return err
	}
	start := time.Now()
	ids, err := commitEvents(ctx, s, t, warmUpEvents)
	if err != nil {
		return err
	}
	if _, err := drained(ctx, s.rcv, ids, start, drainLimit(warmUpEvents)); err != nil {
		return err
	}
	_, err = bareBatch(ctx, bc, s.rcv, slug+"-warmup", warmUpEvents)
	return err
}

// counted runs fn and adds the requests counted meanwhile to acc.
func counted(ctx context.Context, counts func(context.Context) (map[string]float64, error), acc map[string]float64,
	fn func() (sample, error)) error {
	before, err := counts(ctx)
	if err != nil {
		return err
	}
	if _, err := fn(); err != nil {
		return err
	}
	after, err := counts(ctx)
	if err != nil {
		return err
	}
	for op, v := range after {
		acc[op] += v - before[op]
	}
	return nil
}

// firstEventHistory counts the history of the tenant's latest event's workflow.
func (e *env) firstEventHistory(ctx context.Context, s *stack, t *tenant) (History, error) {
	var id string
	if err := s.db.WithContext(ctx).Raw("SELECT id::text FROM events WHERE org_id = ? ORDER BY created_at DESC LIMIT 1", t.orgID).Scan(&id).Error; err != nil {
		return History{}, fmt.Errorf("bench: latest event: %w", err)
	}
	return history(ctx, s.temporal.Client(), "webhook-event/"+id)
}

// bareBatch starts n bare workflows one after another and times them to the last arrival.
func bareBatch(ctx context.Context, bc client.Client, rcv *receiver, prefix string, n int) (Drained, error) {
	ids := make([]string, n)
	start := time.Now()
	for i := range ids {
		ids[i] = fmt.Sprintf("bare-%s-%d", prefix, i)
		if _, err := bc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: ids[i], TaskQueue: bareQueue}, "BareDelivery",
			rcv.srv.URL+"/bare", ids[i]); err != nil {
			return Drained{}, fmt.Errorf("start %s: %w", ids[i], err)
		}
	}
	return drained(ctx, rcv, ids, start, drainLimit(n))
}

// drainLimit is far longer than any batch takes on two shared cores (2 items a second at worst).
func drainLimit(n int) time.Duration { return time.Minute + time.Duration(n)*500*time.Millisecond }

// drained waits until every item has arrived and measures from start to the last arrival.
func drained(ctx context.Context, rcv *receiver, ids []string, start time.Time, limit time.Duration) (Drained, error) {
	deadline := start.Add(limit)
	var last time.Time
	for _, id := range ids {
		at, ok := waitArrival(ctx, rcv, id, deadline)
		if !ok {
			return Drained{}, fmt.Errorf("%s not delivered within %s", id, limit)
		}
		if at.After(last) {
			last = at
		}
	}
	secs := last.Sub(start).Seconds()
	return Drained{Events: len(ids), Seconds: secs, Rate: round1(float64(len(ids)) / secs)}, nil
}

// pooledRate is every round's items over every round's time.
func pooledRate(rounds []Drained) float64 {
	var n int
	var secs float64
	for _, r := range rounds {
		n, secs = n+r.Events, secs+r.Seconds
	}
	if secs == 0 {
		return 0
	}
	return round1(float64(n) / secs)
}

// sideStack is a Temporal server and a wds worker of their own for one measurement, started after
// the measurement's events are committed.
type sideStack struct {
	temporal *temporaldev.Server
	worker   *proc
	metrics  string // the worker's Prometheus address
}

// startSide starts a fresh in-memory Temporal dev server and a wds worker on it with extra
// environment; the worker's relay finds the committed events at once.
func (e *env) startSide(ctx context.Context, s *stack, name string, extra ...string) (*sideStack, error) {
	tsrv, err := temporaldev.Start(ctx, temporaldev.Options{})
	if err != nil {
		return nil, err
	}
	e.closers = append(e.closers, func() { _ = tsrv.Stop() })
	metrics, err := freeport.Addr()
	if err != nil {
		return nil, err
	}
	environ := append(e.wdsEnv(s.dbURL, "TEMPORAL_ADDRESS="+tsrv.Address, "WDS_WEBHOOK_ALLOW_PRIVATE=true",
		"WDS_WEBHOOK_CA_FILE="+s.rcv.caFile, "WDS_METRICS_ADDR="+metrics), extra...)
	w, err := e.start(name, environ, e.wdsBin, "worker")
	if err != nil {
		return nil, err
	}
	return &sideStack{temporal: tsrv, worker: w, metrics: metrics}, nil
}

// peakMB is the high-water resident set of the side's worker and of its Temporal server.
func (ss *sideStack) peakMB() (worker, temporal float64, err error) {
	rss, err := peakRSS(ss.worker.cmd.Process.Pid, ss.worker.name)
	if err != nil {
		return 0, 0, err
	}
	_, port, _ := strings.Cut(ss.temporal.Address, ":")
	pids := pidListening("start-dev", port)
	if len(pids) == 0 {
		return 0, 0, fmt.Errorf("bench: no Temporal server process on port %s", port)
	}
	trss, err := peakRSS(pids[0], "temporal")
	if err != nil {
		return 0, 0, err
	}
	return mb(rss), mb(trss), nil
}

func mb(bytes int64) float64 { return round1(float64(bytes) / (1 << 20)) }

func (ss *sideStack) stop() {
	ss.worker.stop()
	_ = ss.temporal.Stop()
}

// backlogDrain commits the backlog while no Temporal runs, then starts Temporal and a worker and
// times from Temporal's start to the last arrival.
func (e *env) backlogDrain(ctx context.Context, o Options, s *stack) (BacklogDrain, error) {
	t, _, err := e.hookTenant(ctx, s, "Backlog benchmark", "/hook")
	if err != nil {
		return BacklogDrain{}, err
	}
	ids, err := commitEvents(ctx, s, t, o.BacklogEvents)
	if err != nil {
		return BacklogDrain{}, err
	}
	e.logf("backlog: %d events committed with Temporal stopped; starting Temporal and a worker", len(ids))
	start := time.Now()
	side, err := e.startSide(ctx, s, "worker-backlog")
	if err != nil {
		return BacklogDrain{}, err
	}
	defer side.stop()
	d, err := drained(ctx, s.rcv, ids, start, drainLimit(len(ids)))
	if err != nil {
		return BacklogDrain{}, fmt.Errorf("bench: backlog: %w (worker: %v)", err, side.worker.exited())
	}
	e.logf("backlog: %d events delivered in %.1f s, %.1f/s", d.Events, d.Seconds, d.Rate)
	return BacklogDrain{Drained: d}, nil
}

// waitingChains fails every first attempt of o.WaitingChains events, waits until each chain has
// failed once (its timer then runs), lets the receiver recover, times the retries to the last
// arrival, and reads the high-water RSS of the worker and of Temporal, which covers the waiting.
func (e *env) waitingChains(ctx context.Context, o Options, s *stack) (WaitingChains, error) {
	res := WaitingChains{Chains: o.WaitingChains, Ladder: o.WaitingLadder}
	t, _, err := e.hookTenant(ctx, s, "Waiting chains benchmark", "/flaky")
	if err != nil {
		return res, err
	}
	s.rcv.failing.Store(true)
	ids, err := commitEvents(ctx, s, t, o.WaitingChains)
	if err != nil {
		return res, err
	}
	start := time.Now()
	side, err := e.startSide(ctx, s, "worker-waiting", "WDS_WEBHOOK_RETRY_SCHEDULE="+o.WaitingLadder)
	if err != nil {
		return res, err
	}
	defer side.stop()
	if err := e.waitFailedOnce(ctx, s, t.orgID, len(ids), side.worker); err != nil {
		return res, err
	}
	res.SecondsToWait = round1(time.Since(start).Seconds())
	recovered := time.Now()
	s.rcv.failing.Store(false)
	e.logf("waiting chains: %d waiting after %.1f s; receiver recovered", len(ids), res.SecondsToWait)
	var first, last time.Time
	for _, id := range ids {
		at, ok := waitArrival(ctx, s.rcv, id, recovered.Add(drainLimit(len(ids))+o.waitingLadderMax()))
		if !ok {
			return res, fmt.Errorf("bench: waiting chains: %s not delivered after the receiver recovered", id)
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	res.FinishSeconds = round1(last.Sub(first).Seconds())
	res.RecoverySeconds = round1(last.Sub(recovered).Seconds())
	// High-water marks: the waiting, the retries and the drain all count.
	if res.WorkerPeakMB, res.TemporalPeakMB, err = side.peakMB(); err != nil {
		return res, err
	}
	e.logf("waiting chains: last delivered %.1f s after the recovery; peak RSS worker %.0f MB, Temporal %.0f MB",
		res.RecoverySeconds, res.WorkerPeakMB, res.TemporalPeakMB)
	var eventID uuid.UUID
	if err := s.db.WithContext(ctx).Raw("SELECT id FROM events WHERE org_id = ? LIMIT 1", t.orgID).Row().Scan(&eventID); err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}
	if res.History, err = waitHistory(ctx, side.temporal.Client(), contract.EventWorkflowID(eventID)); err != nil {
		return res, err
	}
	res.HistoryEvents = res.History.Events
	return res, nil
}

// waitHistory reads the history of a workflow once it has closed (its last activity's completion
// may still be on its way when the receipt is seen).
func waitHistory(ctx context.Context, c client.Client, workflowID string) (History, error) {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		d, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
		if err != nil {
			return History{}, fmt.Errorf("bench: describe %s: %w", workflowID, err)
		}
		if d.GetWorkflowExecutionInfo().GetCloseTime() != nil {
			return history(ctx, c, workflowID)
		}
		if time.Now().After(deadline) {
			return History{}, fmt.Errorf("bench: %s still running a minute after its delivery", workflowID)
		}
	}
}

// waitFailedOnce waits until every event of the org has a failed first attempt logged.
func (e *env) waitFailedOnce(ctx context.Context, s *stack, orgID uuid.UUID, n int, worker *proc) error {
	for deadline := time.Now().Add(drainLimit(n)); ; time.Sleep(250 * time.Millisecond) {
		var failed int64
		if err := s.db.WithContext(ctx).Raw("SELECT count(*) FROM webhook_deliveries WHERE org_id = ? AND attempt = 1 AND status <> ?",
			orgID, models.StatusSucceeded).Scan(&failed).Error; err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if int(failed) >= n {
			return nil
		}
		if err := worker.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: waiting chains: %d of %d first attempts failed after %s", failed, n, drainLimit(n))
		}
	}
}

// waitingLadderMax is the ladder's last delay: the latest a waiting chain's retry can come.
func (o Options) waitingLadderMax() time.Duration {
	parts := strings.Split(o.WaitingLadder, ",")
	d, _ := time.ParseDuration(parts[len(parts)-1])
	return d
}
