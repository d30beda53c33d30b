// Package bench is `make bench`: it starts its own PostgreSQL cluster and wds processes, loads data,
// drives the service from Go load generators, and measures the same work with baselines (pgbench) in
// the same run on the same machine, because these machines are shared and noisy and only ratios
// survive. cmd/wdsbench is its command line; a smoke mode of it runs in `make test`.
package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sirupsen/logrus"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"wds/internal/dev/temporaldev"
	"wds/internal/platform/database"
	"wds/internal/platform/freeport"
	"wds/internal/platform/secrets"
	"wds/models"
)

// Options size a run.
type Options struct {
	Mode         string        // "full" or "smoke", recorded in the results
	Orders       int           // orders in the read benchmark's org
	FeedEvents   int           // events in the feed line's history
	Clients      int           // concurrency of the main measurements
	Duration     time.Duration // length of each main measurement, per side
	Rounds       int           // the main measurements alternate service and baseline in this many rounds
	Warmup       time.Duration // unmeasured load before the first measurement
	PageCompare  time.Duration // first page against last page, one client
	CurveClients []int         // concurrencies of the latency-against-load curve
	CurveStep    time.Duration // length of each curve point
	Walk         int           // pages a client follows before starting elsewhere
	ReadKeys     int           // read keys minted (each serves at most 500 requests)
	TPCBScale    int           // pgbench scale of the ingest baseline
	RateStart    float64       // first rate of the webhook ladders, per second
	RateMax      float64       // the ladders stop above this rate
	RateStep     time.Duration // length of each ladder step
	WDSBinary    string        // a built wds; empty builds this module's cmd/wds
	Keep         bool          // keep the run's directory (cluster, logs) for inspection
	ProfileServe bool          // Profile drives the run's wds serve instead of the API in its own process
	// ScaleEvents events are committed at once in each of ScaleRounds delivery-only rounds.
	ScaleEvents, ScaleRounds int
	BacklogEvents            int    // committed while Temporal is stopped, then drained
	WaitingChains            int    // chains left waiting on the ladder's timers
	WaitingLadder            string // WDS_WEBHOOK_RETRY_SCHEDULE of the waiting chains, shortened
	RecoveryChains           int    // dropped chains one recovery re-fires
	// LimitedEvents are committed while Temporal is stopped for an endpoint limited to LimitedRate a
	// second, below what the drain would reach.
	LimitedEvents, LimitedRate int
	// Temporal names the servers the delivery-only line runs on, of TemporalServers(): the dev server
	// (the stack's) and the cluster built from source, once for each of ClusterShards history shards.
	Temporal      []string
	ClusterShards []int
	Noisy         NoisyOptions // the noisy-neighbour line
	// Parts selects what runs, of Parts(); empty runs everything.
	Parts []string
	Log   io.Writer // progress and the results table
}

// Full is the measurement the issue asks for.
func Full() Options {
	return Options{Mode: "full", Orders: 1_000_000, FeedEvents: 1_000_000, Clients: 16, Duration: 20 * time.Second, Rounds: 4, Warmup: 5 * time.Second,
		PageCompare: 6 * time.Second, CurveClients: []int{1, 2, 4, 8, 16}, CurveStep: 5 * time.Second, Walk: 20,
		ReadKeys: 1000, TPCBScale: 16, RateStart: 5, RateMax: 2000, RateStep: 8 * time.Second,
		ScaleEvents: 1000, ScaleRounds: 3, BacklogEvents: 20_000, WaitingChains: 10_000, WaitingLadder: "10m",
		RecoveryChains: 10_000, LimitedEvents: 200, LimitedRate: 10, Temporal: TemporalServers(), ClusterShards: []int{1, 8},
		Log: os.Stderr,
		Noisy: NoisyOptions{Rows: 1_000_000, Dropped: 200_000, Recover: 20_000, Held: 60, Searches: 8, Members: 4, Duration: time.Minute,
			CreateRate: 20, ReadRate: 50}}
}

// Smoke is a few seconds on tiny data: it proves the whole program still runs, not how fast.
func Smoke() Options {
	return Options{Mode: "smoke", Orders: 2000, FeedEvents: 3000, Clients: 4, Duration: 2 * time.Second, Rounds: 2, Warmup: 500 * time.Millisecond,
		PageCompare: 500 * time.Millisecond, CurveClients: []int{1, 4}, CurveStep: time.Second, Walk: 5,
		ReadKeys: 100, TPCBScale: 1, RateStart: 5, RateMax: 8, RateStep: time.Second,
		ScaleEvents: 10, ScaleRounds: 1, BacklogEvents: 20, WaitingChains: 10, WaitingLadder: "3s",
		RecoveryChains: 20, LimitedEvents: 20, LimitedRate: 5, Temporal: TemporalServers(), ClusterShards: []int{1, 8},
		Log: os.Stderr,
		Noisy: NoisyOptions{Rows: 20_000, Dropped: 4_000, Recover: 400, Held: 5, Searches: 8, Members: 2, Duration: 5 * time.Second,
			CreateRate: 5, ReadRate: 10}}
}

// Parts are the parts of a run, each a group of lines of the table: read, ingest, feed (the event
// feed's pages and its lag), webhooks (the ladders), noisy (one org's outage beside another's
// traffic), scale (delivery only, recovery, backlog drains, waiting chains, a retry's cost).
// delivery is the scale part's delivery-only line alone, a short measurement printed and not saved
// (PrintDelivery).
func Parts() []string {
	return []string{"read", "ingest", "feed", "webhooks", "noisy", "scale", "delivery"}
}

// runs reports whether the run includes part.
func (o Options) runs(part string) bool { return len(o.Parts) == 0 || slices.Contains(o.Parts, part) }

// Results is everything a run measured; cmd/wdsbench writes it as JSON and renders the docs from it.
type Results struct {
	Mode       string         `json:"mode"`
	Source     string         `json:"source"`
	StartedAt  time.Time      `json:"started_at"`
	Machine    Machine        `json:"machine"`
	PostgreSQL string         `json:"postgresql"`
	Cluster    string         `json:"cluster"`
	Load       LoadResult     `json:"load"`
	Read       *ReadResult    `json:"read"`
	Ingest     *IngestResult  `json:"ingest"`
	Feed       *FeedResult    `json:"feed"`
	Webhooks   *WebhookResult `json:"webhooks"`
	Scale      *ScaleResult   `json:"delivery_scale"`
	Noisy      *NoisyResult   `json:"noisy_neighbour"`
	Memory     []Memory       `json:"memory"`
}

// Memory is a process's peak resident set over the whole run.
type Memory struct {
	Process string  `json:"process"`
	PeakMB  float64 `json:"peak_rss_mb"`
}

// Machine describes where the figures were taken.
type Machine struct {
	CPUs      int     `json:"cpus"`
	CPUModel  string  `json:"cpu_model"`
	MemGiB    float64 `json:"mem_gib"`
	Kernel    string  `json:"kernel"`
	Go        string  `json:"go"`
	LoadStart string  `json:"loadavg_at_start"`
	LoadEnd   string  `json:"loadavg_at_end"`
}

// Run performs one benchmark run and returns its results.
func Run(ctx context.Context, o Options) (*Results, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.runs("scale") && !o.on(devServer) {
		return nil, fmt.Errorf("bench: the scale part's recovery, backlog and waiting lines run on the dev server: -temporal must name %s", devServer)
	}
	res := &Results{Mode: o.Mode, StartedAt: time.Now().UTC(), Machine: machine(), Cluster: clusterSettings}
	e, err := newEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	res.Source = e.source
	s, err := e.startStack(ctx, o)
	if err != nil {
		return nil, err
	}
	e.logf("stack up: PostgreSQL on port %d, Temporal at %s, wds serve at %s", e.cluster.Port(), s.temporalAddr, s.base)
	if res.PostgreSQL, err = e.serverVersion(ctx); err != nil {
		return nil, err
	}
	if err := e.runParts(ctx, o, s, res); err != nil {
		return nil, err
	}
	for _, p := range []*proc{s.serve, s.worker} {
		if err := p.exited(); err != nil {
			return nil, err
		}
		rss, err := p.peakRSS()
		if err != nil {
			return nil, err
		}
		res.Memory = append(res.Memory, Memory{Process: "wds " + p.name, PeakMB: mb(rss)})
	}
	// Last: it stops the stack's worker, whose relay would start the events it commits.
	if o.runs("scale") {
		if res.Scale, err = e.scalePhase(ctx, o, s); err != nil {
			return nil, err
		}
	} else if o.runs("delivery") {
		sc := &ScaleResult{StartedAt: time.Now().UTC(), Source: e.source, LoadStart: loadavg()}
		if o.on(devServer) {
			if sc.Delivery, err = e.deliveryOnly(ctx, o, s, "dev server"); err != nil {
				return nil, err
			}
		}
		sc.LoadEnd = loadavg()
		res.Scale = sc
	}
	if res.Scale != nil && o.on(clusterServer) {
		// The stack's worker would start the cluster's events on the dev server.
		s.worker.stop()
		if res.Scale.Cluster, err = e.clusterDeliveries(ctx, o, s); err != nil {
			return nil, err
		}
		res.Scale.LoadEnd = loadavg()
	}
	res.Machine.LoadEnd = loadavg()
	return res, nil
}

// runParts runs the selected parts but the scale, which comes last.
func (e *env) runParts(ctx context.Context, o Options, s *stack, res *Results) error {
	var err error
	if o.runs("read") {
		r, err := e.prepareRead(ctx, o, s, res)
		if err != nil {
			return err
		}
		if res.Read, err = e.runRead(ctx, o, r, s.cpu, s.dbURL, "wds"); err != nil {
			return err
		}
	}
	if o.runs("ingest") {
		if res.Ingest, err = e.ingestPhase(ctx, o, s); err != nil {
			return err
		}
	}
	if o.runs("feed") {
		if res.Feed, err = e.feedPhase(ctx, o, s); err != nil {
			return err
		}
	}
	if o.runs("webhooks") {
		if err := e.waitIdle(ctx, s); err != nil {
			return err
		}
		if res.Webhooks, err = e.webhookPhase(ctx, o, s); err != nil {
			return err
		}
	}
	if o.runs("noisy") {
		if res.Noisy, err = e.noisyPhase(ctx, o, s); err != nil {
			return err
		}
	}
	return nil
}

// stack is what every measurement talks to: the database, Temporal, the receiver, wds serve and
// wds worker, and an operator's handle on the database.
type stack struct {
	dbURL    string
	db       *gorm.DB
	box      *secrets.Box
	temporal temporalServer
	// temporalAddr is the Temporal frontend's address; workerMetrics the Prometheus address of wds
	// worker and workerPprof its runtime profiles' (WDS_PPROF_ADDR).
	temporalAddr  string
	workerMetrics string
	workerPprof   string
	// temporalDesc and shards describe the Temporal server for the results.
	temporalDesc string
	shards       int
	rcv          *receiver
	serve        *proc
	worker       *proc
	base         string
	cpu          *cpuMeter
	environ      []string // of wds serve and wds worker
	// metrics are the Prometheus addresses of wds serve and wds worker.
	metrics []string
}

// startStack migrates a fresh database and starts Temporal, the receiver, wds serve and wds worker as
// a deployment would run them, configured by environment variables only.
func (e *env) startStack(ctx context.Context, o Options) (*stack, error) {
	s := &stack{}
	var err error
	if s.dbURL, err = e.createDB(ctx, "wds"); err != nil {
		return nil, err
	}
	if _, err := e.runWDS(ctx, e.wdsEnv(s.dbURL), "migrate", "up"); err != nil {
		return nil, err
	}
	if s.db, err = database.Open(ctx, s.dbURL, quietLog()); err != nil {
		return nil, err
	}
	e.closers = append(e.closers, func() { _ = database.Close(s.db) })
	if s.box, err = secrets.NewBox(e.encKey); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := e.initTPCB(ctx, o.TPCBScale); err != nil {
		return nil, err
	}
	// In memory, as the dev server runs by default: the benchmark keeps no workflow history.
	dev, err := temporaldev.Start(ctx, temporaldev.Options{})
	if err != nil {
		return nil, err
	}
	e.closers = append(e.closers, func() { _ = dev.Stop() })
	s.temporal, s.temporalAddr = dev, dev.Address
	s.temporalDesc, s.shards = "Temporal CLI dev server (SQLite in memory)", 1
	if s.rcv, err = newReceiver(e.dir); err != nil {
		return nil, err
	}
	e.closers = append(e.closers, s.rcv.close)
	s.environ = e.wdsEnv(s.dbURL, "TEMPORAL_ADDRESS="+s.temporalAddr, "WDS_WEBHOOK_ALLOW_PRIVATE=true",
		"WDS_WEBHOOK_CA_FILE="+s.rcv.caFile)
	var serveMetrics string
	if s.serve, s.base, serveMetrics, err = e.startServe(ctx, "serve", s.environ); err != nil {
		return nil, err
	}
	if s.workerMetrics, err = freeport.Addr(); err != nil {
		return nil, err
	}
	if s.workerPprof, err = freeport.Addr(); err != nil {
		return nil, err
	}
	workerEnv := slices.Concat(s.environ, []string{"WDS_METRICS_ADDR=" + s.workerMetrics, "WDS_PPROF_ADDR=" + s.workerPprof})
	if s.worker, err = e.start("worker", workerEnv, e.wdsBin, "worker"); err != nil {
		return nil, err
	}
	s.metrics = []string{serveMetrics, s.workerMetrics}
	s.cpu = e.devMeter(s.serve, s.worker, s.temporalAddr)
	return s, nil
}

// devMeter meters a stack on a dev server: wds serve and worker, the dev server listening at
// temporalAddr, PostgreSQL and this process.
func (e *env) devMeter(serve, worker *proc, temporalAddr string) *cpuMeter {
	_, port, _ := strings.Cut(temporalAddr, ":")
	temporalPid := pidListening("start-dev", port)
	return &cpuMeter{parts: map[string]func() []int{
		"wds serve":  func() []int { return []int{serve.cmd.Process.Pid} },
		"wds worker": func() []int { return []int{worker.cmd.Process.Pid} },
		"temporal":   func() []int { return temporalPid },
		"postgres":   func() []int { return postgresPids(filepath.Join(e.dir, "pg", "pgdata")) },
		// The load generators, the receiver, the bare worker and (as reaped children) pgbench.
		"wdsbench": func() []int { return []int{os.Getpid()} },
	}}
}

// ingestPhase creates the ingest org and measures order creation.
func (e *env) ingestPhase(ctx context.Context, o Options, s *stack) (*IngestResult, error) {
	t, err := newTenant(ctx, s.db, "Ingest benchmark")
	if err != nil {
		return nil, err
	}
	g, err := newIngester(ctx, s.db, s.box, t, s.base, "ingest-", ingestBudget(o), true)
	if err != nil {
		return nil, err
	}
	e.logf("ingest: capturing the statements of a create for the replay baseline")
	rep, err := e.captureReplay(ctx, s, g, t)
	if err != nil {
		return nil, err
	}
	return e.runIngest(ctx, o, g, rep, s.cpu, s.dbURL, t)
}

// ingestBudget is far more creates than two cores can make in the warm-up and the measurement.
func ingestBudget(o Options) int { return int(2000 * (o.Warmup + o.Duration).Seconds()) }

// waitIdle waits until the relay has started every event the ingest phase left behind and every
// workflow has finished, so the delivery measurements start on an idle worker.
func (e *env) waitIdle(ctx context.Context, s *stack) error {
	start := time.Now()
	for deadline := start.Add(5 * time.Minute); ; {
		var undispatched int64
		if err := s.db.WithContext(ctx).Raw(benchSQL + "SELECT count(*) FROM event_states WHERE dispatched_at IS NULL").Scan(&undispatched).Error; err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		running, err := s.temporal.Client().CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
			Query: "ExecutionStatus = 'Running'"})
		if err != nil {
			return fmt.Errorf("bench: count running workflows: %w", err)
		}
		if undispatched == 0 && running.GetCount() == 0 {
			e.logf("worker idle after %.1f s", time.Since(start).Seconds())
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: worker still busy after 5 minutes: %d undispatched events, %d running workflows%s",
				undispatched, running.GetCount(), runningWorkflows(ctx, s.temporal.Client()))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// runningWorkflows names a few running workflows and when they started, for the error that says the
// worker never became idle.
func runningWorkflows(ctx context.Context, c client.Client) string {
	list, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		PageSize: 5, Query: "ExecutionStatus = 'Running'"})
	if err != nil {
		return fmt.Sprintf(" (listing them failed: %v)", err)
	}
	var b strings.Builder
	for _, w := range list.GetExecutions() {
		fmt.Fprintf(&b, "; %s (%s, started %s)", w.GetExecution().GetWorkflowId(), w.GetType().GetName(),
			w.GetStartTime().AsTime().Format(time.TimeOnly))
	}
	return b.String()
}

// webhookPhase creates the webhook org with one endpoint at the receiver and measures delivery.
func (e *env) webhookPhase(ctx context.Context, o Options, s *stack) (*WebhookResult, error) {
	if err := s.worker.exited(); err != nil {
		return nil, err
	}
	t, err := newTenant(ctx, s.db, "Webhook benchmark")
	if err != nil {
		return nil, err
	}
	environ := e.wdsEnv(s.dbURL, "WDS_WEBHOOK_ALLOW_PRIVATE=true")
	if _, err := e.runWDS(ctx, environ, "admin", "endpoint", "create", "--org", t.orgID.String(), "--actor", t.ownerID.String(),
		"--url", s.rcv.srv.URL+"/hook", "--events", "order.created"); err != nil {
		return nil, err
	}
	budget := int(o.RateMax*o.RateStep.Seconds()*12 + (o.RateMax+asksRate)*o.Duration.Seconds())
	g, err := newIngester(ctx, s.db, s.box, t, s.base, "hook-", budget, false)
	if err != nil {
		return nil, err
	}
	res, err := e.runWebhooks(ctx, o, g, s, func() error { return e.waitIdle(ctx, s) },
		func() error { return analyze(ctx, s.dbURL) })
	if err != nil {
		return nil, err
	}
	// The error text is cut where it starts naming ids, so equal causes count together.
	res.Attempts = []AttemptCount{}
	err = s.db.WithContext(ctx).Raw(`SELECT attempt, status, left(error, 80) AS error, count(*) AS count
		FROM webhook_deliveries WHERE org_id = ? AND NOT (attempt = 1 AND status = ?)
		GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1, 2, 3`, t.orgID, models.StatusSucceeded).Scan(&res.Attempts).Error
	if err != nil {
		return nil, fmt.Errorf("bench: delivery attempts: %w", err)
	}
	for _, a := range res.Attempts {
		e.logf("webhooks: %d deliveries at attempt %d %s: %s", a.Count, a.Attempt, a.Status, a.Error)
	}
	return res, nil
}

// prepareRead makes the read benchmark's org, loads its orders and mints its keys.
func (e *env) prepareRead(ctx context.Context, o Options, s *stack, res *Results) (*reader, error) {
	t, err := newTenant(ctx, s.db, "Read benchmark")
	if err != nil {
		return nil, err
	}
	data := &dataset{orgID: t.orgID, storeID: t.storeID, orders: o.Orders, t0: time.Now().UTC().Truncate(time.Millisecond)}
	e.logf("loading %d orders", o.Orders)
	if res.Load, err = load(ctx, s.dbURL, data, o.Log); err != nil {
		return nil, err
	}
	e.logf("loaded %d rows in %.1f s (%.0f rows/s)", res.Load.Rows, res.Load.Seconds, res.Load.RowsPerSec)
	keys, err := mintReadKeys(ctx, s.db, t, o.ReadKeys)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	return &reader{base: s.base, client: client, keys: keys, data: data, walk: o.Walk}, nil
}

// startServe runs `wds serve` on a free loopback port and waits until it answers; name names its
// log. It returns the API's base URL and the address of its Prometheus endpoint.
func (e *env) startServe(ctx context.Context, name string, environ []string) (p *proc, base, metrics string, err error) {
	addr, err := freeport.Addr()
	if err != nil {
		return nil, "", "", err
	}
	if metrics, err = freeport.Addr(); err != nil {
		return nil, "", "", err
	}
	if p, err = e.start(name, append(environ, "WDS_HTTP_ADDR="+addr, "WDS_METRICS_ADDR="+metrics), e.wdsBin, "serve"); err != nil {
		return nil, "", "", err
	}
	base = "http://" + addr
	return p, base, metrics, waitHTTP(ctx, p, base+"/v1/health")
}

func (e *env) serverVersion(ctx context.Context) (string, error) {
	conn, err := pgx.Connect(ctx, e.cluster.URL("postgres"))
	if err != nil {
		return "", fmt.Errorf("bench: connect: %w", err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	return v, nil
}

func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.log, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// quietLog is the logger of the benchmark's own database handles: it has nothing to say.
func quietLog() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), LoadStart: loadavg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPUModel = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %f kB", &kb); err == nil {
			m.MemGiB = round1(kb / (1 << 20))
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// source names the code measured: the commit, and whether the work tree differed from it (the
// benchmark builds the tree as it is).
func source(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown (not a git work tree)"
	}
	s := "commit " + strings.TrimSpace(string(out))
	if dirty, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(dirty) > 0 {
		s += fmt.Sprintf(" with uncommitted changes in %d files", strings.Count(string(dirty), "\n"))
	}
	return s
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
