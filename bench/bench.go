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
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sirupsen/logrus"

	"wds/database"
)

// Options size a run.
type Options struct {
	Mode         string        // "full" or "smoke", recorded in the results
	Orders       int           // orders in the read benchmark's org
	Clients      int           // concurrency of the main measurements
	Duration     time.Duration // length of each main measurement
	Warmup       time.Duration // unmeasured load before the first measurement
	PageCompare  time.Duration // first page against last page, one client
	CurveClients []int         // concurrencies of the latency-against-load curve
	CurveStep    time.Duration // length of each curve point
	Walk         int           // pages a client follows before starting elsewhere
	ReadKeys     int           // read keys minted (each serves at most 500 requests)
	WDSBinary    string        // a built wds; empty builds this module's cmd/wds
	Keep         bool          // keep the run's directory (cluster, logs) for inspection
	Log          io.Writer     // progress and the results table
}

// Full is the measurement the issue asks for.
func Full() Options {
	return Options{Mode: "full", Orders: 1_000_000, Clients: 16, Duration: 20 * time.Second, Warmup: 5 * time.Second,
		PageCompare: 6 * time.Second, CurveClients: []int{1, 2, 4, 8, 16}, CurveStep: 5 * time.Second, Walk: 20,
		ReadKeys: 1000, Log: os.Stderr}
}

// Smoke is a few seconds on tiny data: it proves the whole program still runs, not how fast.
func Smoke() Options {
	return Options{Mode: "smoke", Orders: 2000, Clients: 4, Duration: 2 * time.Second, Warmup: 500 * time.Millisecond,
		PageCompare: 500 * time.Millisecond, CurveClients: []int{1, 4}, CurveStep: time.Second, Walk: 5,
		ReadKeys: 100, Log: os.Stderr}
}

// Results is everything a run measured; cmd/wdsbench writes it as JSON and renders the docs from it.
type Results struct {
	Mode        string      `json:"mode"`
	StartedAt   time.Time   `json:"started_at"`
	Machine     Machine     `json:"machine"`
	PostgreSQL  string      `json:"postgresql"`
	Cluster     string      `json:"cluster"`
	Load        LoadResult  `json:"load"`
	Read        *ReadResult `json:"read"`
	Memory      []Memory    `json:"memory"`
	NotMeasured []string    `json:"not_measured,omitempty"`
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
	res := &Results{Mode: o.Mode, StartedAt: time.Now().UTC(), Machine: machine(), Cluster: clusterSettings}
	e, err := newEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	e.logf("cluster up on port %d; wds at %s", e.cluster.Port(), e.wdsBin)
	if res.PostgreSQL, err = e.serverVersion(ctx); err != nil {
		return nil, err
	}
	dbURL, err := e.createDB(ctx, "wds")
	if err != nil {
		return nil, err
	}
	if _, err := e.runWDS(ctx, e.wdsEnv(dbURL), "migrate", "up"); err != nil {
		return nil, err
	}
	serve, base, err := e.startServe(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	r, err := e.prepareRead(ctx, o, dbURL, res)
	if err != nil {
		return nil, err
	}
	r.base = base
	if res.Read, err = e.runRead(ctx, o, r, dbURL, "wds"); err != nil {
		return nil, err
	}
	if err := serve.exited(); err != nil {
		return nil, err
	}
	rss, err := serve.peakRSS()
	if err != nil {
		return nil, err
	}
	res.Memory = append(res.Memory, Memory{Process: "wds serve", PeakMB: round1(float64(rss) / (1 << 20))})
	res.Machine.LoadEnd = loadavg()
	return res, nil
}

// prepareRead makes the read benchmark's org, loads its orders and mints its keys.
func (e *env) prepareRead(ctx context.Context, o Options, dbURL string, res *Results) (*reader, error) {
	db, err := database.Open(ctx, dbURL, quietLog())
	if err != nil {
		return nil, err
	}
	defer database.Close(db)
	t, err := newTenant(ctx, db, "Read benchmark")
	if err != nil {
		return nil, err
	}
	data := &dataset{orgID: t.orgID, storeID: t.storeID, orders: o.Orders, t0: time.Now().UTC().Truncate(time.Millisecond)}
	e.logf("loading %d orders", o.Orders)
	if res.Load, err = load(ctx, dbURL, data, o.Log); err != nil {
		return nil, err
	}
	e.logf("loaded %d rows in %.1f s (%.0f rows/s)", res.Load.Rows, res.Load.Seconds, res.Load.RowsPerSec)
	keys, err := mintReadKeys(ctx, db, t, o.ReadKeys)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	return &reader{client: client, keys: keys, data: data, walk: o.Walk}, nil
}

// startServe runs `wds serve` on a free loopback port and waits until it answers.
func (e *env) startServe(ctx context.Context, dbURL string) (*proc, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	metrics, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	p, err := e.start("serve", e.wdsEnv(dbURL, "WDS_HTTP_ADDR="+addr, "WDS_METRICS_ADDR="+metrics), e.wdsBin, "serve")
	if err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	return p, base, waitHTTP(ctx, p, base+"/v1/health")
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

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
