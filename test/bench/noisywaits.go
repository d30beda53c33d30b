package bench

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"gorm.io/gorm"
)

// NoisyWaits is what org B's requests and the stack waited on during a window, beside its CPU: the
// turns at the database that serve and the worker handed out (WDS_DB_CONCURRENCY), and what the
// database's active sessions were doing, sampled. Item by item they say whether a slower window was
// queued at wds's gate, on a lock, on I/O or on the CPU.
type NoisyWaits struct {
	// Gate is each process's turns at the database: how many, how long they waited in all, and how
	// many were refused after 10 s.
	Gate map[string]GateWaits `json:"gate"`
	// Active is the database's mean number of active sessions by what they waited on
	// (pg_stat_activity's wait_event_type, "CPU" when none), sampled every 100 ms.
	Active  map[string]float64 `json:"db_active_sessions"`
	Samples int                `json:"db_samples"`
}

// GateWaits is one process's turns at the database during a window.
type GateWaits struct {
	Turns       float64 `json:"turns"`
	WaitSeconds float64 `json:"wait_seconds"`
	MeanWaitMs  float64 `json:"mean_wait_ms"`
	Refused     float64 `json:"refused"`
}

// waitMeter takes a window's NoisyWaits: the gate's counters before and after from each process's
// /metrics, and the sessions sampled in between.
type waitMeter struct {
	db      *gorm.DB
	metrics map[string]string // process name -> its Prometheus address
}

// measure runs f, sampling the database's sessions meanwhile, and says what was waited on.
func (m *waitMeter) measure(ctx context.Context, f func()) (NoisyWaits, error) {
	before, err := m.gates(ctx)
	if err != nil {
		return NoisyWaits{}, err
	}
	sctx, stop := context.WithCancel(ctx)
	var active map[string]float64
	var samples int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); active, samples = m.sample(sctx) }()
	f()
	stop()
	wg.Wait()
	after, err := m.gates(ctx)
	if err != nil {
		return NoisyWaits{}, err
	}
	w := NoisyWaits{Gate: map[string]GateWaits{}, Active: active, Samples: samples}
	for name, a := range after {
		b := before[name]
		g := GateWaits{Turns: a.Turns - b.Turns, WaitSeconds: round3(a.WaitSeconds - b.WaitSeconds), Refused: a.Refused - b.Refused}
		if g.Turns > 0 {
			g.MeanWaitMs = round3(g.WaitSeconds * 1000 / g.Turns)
		}
		w.Gate[name] = g
	}
	return w, nil
}

// sample counts the database's active sessions by wait type every 100 ms until ctx ends, and
// answers the mean of each.
func (m *waitMeter) sample(ctx context.Context) (map[string]float64, int) {
	sums, n := map[string]float64{}, 0
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			out := map[string]float64{}
			for k, v := range sums {
				out[k] = round3(v / math.Max(float64(n), 1))
			}
			return out, n
		case <-tick.C:
		}
		var rows []struct {
			Kind string
			N    int
		}
		err := m.db.WithContext(ctx).Raw(`SELECT coalesce(wait_event_type, 'CPU') AS kind, count(*) AS n FROM pg_stat_activity
			WHERE state = 'active' AND pid <> pg_backend_pid() AND backend_type = 'client backend' GROUP BY 1`).Scan(&rows).Error
		if err != nil {
			continue // the window's end cancels the last query
		}
		n++
		for _, r := range rows {
			sums[r.Kind] += float64(r.N)
		}
	}
}

// gates reads each process's gate counters.
func (m *waitMeter) gates(ctx context.Context) (map[string]GateWaits, error) {
	out := map[string]GateWaits{}
	for name, addr := range m.metrics {
		fams, err := scrapeFamilies(ctx, addr)
		if err != nil {
			return nil, err
		}
		var g GateWaits
		if h := one(fams["wds_db_gate_wait_seconds"]); h != nil {
			g.Turns, g.WaitSeconds = float64(h.GetHistogram().GetSampleCount()), h.GetHistogram().GetSampleSum()
		}
		if c := one(fams["wds_db_gate_busy_total"]); c != nil {
			g.Refused = c.GetCounter().GetValue()
		}
		out[name] = g
	}
	return out, nil
}

// one is a family's single series, or nil.
func one(f *dto.MetricFamily) *dto.Metric {
	if f == nil || len(f.GetMetric()) != 1 {
		return nil
	}
	return f.GetMetric()[0]
}

// scrapeFamilies reads a process's Prometheus endpoint.
func scrapeFamilies(ctx context.Context, addr string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("bench: metrics of %s: %w", addr, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("bench: metrics of %s: %w", addr, err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("bench: metrics of %s: %w", addr, err)
	}
	return families, nil
}

// String is the window's waits in a line of the results table.
func (w NoisyWaits) String() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(w.Gate)) {
		g := w.Gate[name]
		parts = append(parts, fmt.Sprintf("%s %.0f turns, mean wait %.2f ms, %.0f refused", name, g.Turns, g.MeanWaitMs, g.Refused))
	}
	var act []string
	for _, k := range slices.Sorted(maps.Keys(w.Active)) {
		act = append(act, fmt.Sprintf("%s %.2f", k, w.Active[k]))
	}
	if len(act) > 0 {
		parts = append(parts, "database sessions active: "+strings.Join(act, ", "))
	}
	return strings.Join(parts, "; ")
}
