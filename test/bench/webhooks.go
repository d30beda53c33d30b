package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"wds/internal/platform/metrics/temporalmetrics"
	"wds/internal/platform/temporalclient"
	"wds/workflows/contract"
)

// WebhookResult is the delivery benchmark: the highest steady rate of orders whose order.created
// reaches the receiver, beside a bare Temporal workflow with one HTTPS POST on the same server, and the
// latency at half that rate.
type WebhookResult struct {
	WDSLadder     []RatePoint `json:"wds_ladder"`
	BareLadder    []RatePoint `json:"bare_ladder"`
	WDSMaxRate    float64     `json:"wds_max_steady_rate"`
	BareMaxRate   float64     `json:"bare_max_steady_rate"`
	RateRatio     float64     `json:"rate_ratio"`
	HalfRate      RatePoint   `json:"half_rate"`
	Events        int         `json:"events_received"`
	Duplicates    int         `json:"duplicate_deliveries"`
	Missing       int         `json:"missing_events"`
	Unreadable    int         `json:"unreadable_deliveries"`
	SteadyCeiling string      `json:"steady_criterion"`
	// Attempts is every delivery attempt wds logged that was not a first success: a retry or a
	// failure delays an order's arrival by the ladder's first gap (a minute), which a ladder step
	// reads as a stall.
	Attempts []AttemptCount `json:"attempts_other_than_first_success"`
	// What one delivery costs the Temporal server: the history of one wds event workflow and of one
	// bare workflow.
	WDSHistory  History `json:"wds_history"`
	BareHistory History `json:"bare_history"`
	// The requests to the Temporal server per item, both sides at the same low rate.
	WDSAsks  Asks `json:"wds_asks"`
	BareAsks Asks `json:"bare_asks"`
}

// AttemptCount is how many logged attempts share an attempt number, status and error.
type AttemptCount struct {
	Attempt int    `json:"attempt"`
	Status  string `json:"status"`
	Error   string `json:"error"`
	Count   int    `json:"count"`
}

// History counts the events of one workflow's history by kind.
type History struct {
	Events        int `json:"events"`
	WorkflowTasks int `json:"workflow_tasks"`
	Activities    int `json:"activities"`
	Markers       int `json:"markers"`
	Upserts       int `json:"search_attribute_upserts"`
	Timers        int `json:"timers"`
}

// history reads a finished workflow's history and counts it.
func history(ctx context.Context, c client.Client, workflowID string) (History, error) {
	var h History
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return h, fmt.Errorf("bench: history of %s: %w", workflowID, err)
		}
		h.Events++
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			h.WorkflowTasks++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			h.Activities++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			h.Markers++
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			h.Upserts++
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			h.Timers++
		}
	}
	return h, nil
}

// RatePoint is one paced phase: items started at a fixed rate and their arrival at the receiver.
type RatePoint struct {
	Rate      float64 `json:"rate"`
	Sent      int     `json:"sent"`
	Errors    int     `json:"errors"`
	Behind    int     `json:"behind"`
	Delivered int     `json:"delivered"`
	AckP50Ms  float64 `json:"ack_p50_ms"` // how long the API's answer (or the workflow start) took
	AckP99Ms  float64 `json:"ack_p99_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
	Steady    bool    `json:"steady"`
	// Connections is how many connections the receiver accepted during the step (TLS handshakes).
	Connections int64 `json:"connections_opened"`
	// CPU milliseconds per item, by process, during the step.
	CPUPerItem map[string]float64 `json:"cpu_ms_per_item"`
}

// steadyP90 is the criterion of a steady rate: every item arrived, none failed, the generator never
// fell behind its schedule, and the p90 from acknowledgement to arrival stayed under this. Past the
// capacity a backlog grows through the phase and most items wait seconds; the p90 (not the p99)
// keeps a neighbour's burst on this shared machine from deciding the rate.
const steadyP90 = time.Second

// maxInFlight bounds the generator: an item that finds this many still unanswered counts as behind.
const maxInFlight = 256

// fire starts one item (creates an order, starts a workflow) and returns the id the receiver will see.
type fire func(ctx context.Context) (string, error)

// paced starts items at rate per second for d, waits for them to arrive, and measures each from its
// acknowledgement (the API's answer, the workflow start's return) to its first arrival.
func paced(ctx context.Context, rate float64, d time.Duration, rcv *receiver, f fire) RatePoint {
	p := RatePoint{Rate: rate}
	type sent struct {
		id  string
		ack time.Time
	}
	var acks []time.Duration
	var (
		mu    sync.Mutex
		items []sent
		wg    sync.WaitGroup
		slots = make(chan struct{}, maxInFlight)
	)
	conns := rcv.conns.Load()
	start := time.Now()
	n := int(math.Round(rate * d.Seconds()))
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
		select {
		case slots <- struct{}{}:
		default:
			p.Behind++
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			t := time.Now()
			id, err := f(ctx)
			ack := time.Now()
			mu.Lock()
			defer mu.Unlock()
			acks = append(acks, ack.Sub(t))
			if err != nil {
				p.Errors++
				return
			}
			items = append(items, sent{id, ack})
		})
	}
	wg.Wait()
	p.Sent = len(items)
	var lat []time.Duration
	deadline := time.Now().Add(steadyP90 + 10*time.Second)
	for _, it := range items {
		at, ok := waitArrival(ctx, rcv, it.id, deadline)
		if !ok {
			continue
		}
		p.Delivered++
		// The after-commit start happens before the API answers, so a fast delivery can arrive before
		// the client has read the answer: that is no delay at all.
		lat = append(lat, max(0, at.Sub(it.ack)))
	}
	var a, m Measure
	a.summarize(acks)
	p.AckP50Ms, p.AckP99Ms = a.P50Ms, a.P99Ms
	m.summarize(lat)
	p.P50Ms, p.P90Ms, p.P99Ms, p.MaxMs = m.P50Ms, m.P90Ms, m.P99Ms, m.MaxMs
	p.Connections = rcv.conns.Load() - conns
	p.Steady = p.Errors == 0 && p.Behind == 0 && p.Sent > 0 && p.Delivered == p.Sent && m.P90Ms < ms(steadyP90)
	return p
}

// waitArrival polls the receiver for id until deadline.
func waitArrival(ctx context.Context, rcv *receiver, id string, deadline time.Time) (time.Time, bool) {
	for {
		if at, ok := rcv.arrivedAt(id); ok {
			return at, true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Time{}, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stepTries is how often a step that is not steady is tried before the ladder stops: a neighbour's
// burst on this shared machine can spoil a step; a rate past capacity fails every time.
const stepTries = 3

// refineSteps is how many times the ladder halves, geometrically, the gap between its highest steady
// rate and the first rate past it: rates one step (x1.5) apart would make the ratio of two ladders
// jump between 0.67, 1 and 1.5; after two halvings the highest steady rate is within 11% (x1.5^1/4).
const refineSteps = 2

// ladder is one side of the webhook comparison: what it fires, every step it tried, its highest
// steady rate and the lowest rate found past it (0 while none is).
type ladder struct {
	what       string
	fire       fire
	steps      []RatePoint
	best, past float64
}

// climb runs the ladders interleaved, so that at every rate each side is measured minutes apart at
// most and a neighbour's busy spell on this shared machine falls on both rather than on one. Each
// side warms up at the start rate (unmeasured), then the planner's statistics are refreshed once
// (analyze); then, rate by rate, raised by half each time, every side still climbing tries the rate
// until a try is steady or stepTries fail, and stops climbing at its first unsteady rate. Last, each
// side narrows the gap between its highest steady rate and that one (refineSteps), again in turns.
// idle waits for the worker and Temporal to drain before every try, so no side's step pays for the
// tail of the one before it.
func climb(ctx context.Context, e *env, o Options, rcv *receiver, cpu *cpuMeter, idle, analyze func() error, sides ...*ladder) error {
	for _, l := range sides {
		paced(ctx, o.RateStart, o.RateStep/2, rcv, l.fire)
		if err := idle(); err != nil {
			return err
		}
	}
	if err := analyze(); err != nil {
		return err
	}
	for rate := o.RateStart; rate <= o.RateMax && ctx.Err() == nil; rate = math.Round(rate*1.5*10) / 10 {
		climbing := false
		for _, l := range sides {
			if l.past > 0 {
				continue
			}
			steady, err := l.try(ctx, e, o, rcv, cpu, idle, rate)
			if err != nil {
				return err
			}
			if !steady {
				l.past = rate
				continue
			}
			l.best, climbing = rate, true
		}
		if !climbing {
			break
		}
	}
	for i := 0; i < refineSteps && ctx.Err() == nil; i++ {
		for _, l := range sides {
			if l.best == 0 || l.past == 0 {
				continue
			}
			mid := math.Round(math.Sqrt(l.best*l.past)*10) / 10
			steady, err := l.try(ctx, e, o, rcv, cpu, idle, mid)
			if err != nil {
				return err
			}
			if steady {
				l.best = mid
			} else {
				l.past = mid
			}
		}
	}
	return nil
}

// try runs one rate up to stepTries times, each on an idle worker, and reports whether a try was
// steady.
func (l *ladder) try(ctx context.Context, e *env, o Options, rcv *receiver, cpu *cpuMeter, idle func() error, rate float64) (bool, error) {
	for range stepTries {
		if err := idle(); err != nil {
			return false, err
		}
		acc := map[string]float64{}
		var p RatePoint
		_, _ = cpu.metered(acc, func() (sample, error) { p = paced(ctx, rate, o.RateStep, rcv, l.fire); return sample{}, nil })()
		p.CPUPerItem = perOp(acc, p.Sent)
		e.logf("webhooks: %s at %.1f/s: sent %d (answered in p50 %.0f ms), delivered %d, errors %d, behind %d, "+
			"p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, %d new connections, steady %v", l.what, rate, p.Sent, p.AckP50Ms, p.Delivered,
			p.Errors, p.Behind, p.P50Ms, p.P90Ms, p.P99Ms, p.Connections, p.Steady)
		l.steps = append(l.steps, p)
		if p.Steady {
			return true, nil
		}
	}
	return false, nil
}

// bareQueue is the baseline's own task queue on the same Temporal server.
const bareQueue = "wdsbench-bare"

// bareBody is the size of a typical order.created delivery of the benchmark (about 1.5 kB).
var bareBody = bytes.Repeat([]byte("x"), 1500)

// bareWorker runs the baseline: a workflow that executes one activity, which POSTs to the receiver.
func bareWorker(c client.Client, rcv *receiver) (sdkworker.Worker, error) {
	roots := x509.NewCertPool()
	roots.AddCert(rcv.srv.Certificate())
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots},
		MaxIdleConnsPerHost: 64}}
	post := func(ctx context.Context, url, id string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(bareBody))
		req.Header.Set("X-Bare-Id", id)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("POST %s: %w", url, err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("receiver answered %d", resp.StatusCode)
		}
		return nil
	}
	w := sdkworker.New(c, bareQueue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(bareWorkflow, workflow.RegisterOptions{Name: "BareDelivery"})
	w.RegisterActivityWithOptions(post, activity.RegisterOptions{Name: "BarePost"})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("bench: bare worker: %w", err)
	}
	return w, nil
}

// bareWorkflow is the least a webhook delivery on Temporal can be: one activity, one attempt.
func bareWorkflow(ctx workflow.Context, url, id string) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	return workflow.ExecuteActivity(ctx, "BarePost", url, id).Get(ctx, nil)
}

// runWebhooks measures both ladders, then wds at half its highest steady rate, and checks the dedupe.
func (e *env) runWebhooks(ctx context.Context, o Options, g *ingester, s *stack, idle, analyze func() error) (*WebhookResult, error) {
	res := &WebhookResult{SteadyCeiling: fmt.Sprintf("every item arrived, no errors, generator on schedule, p90 < %s; "+
		"a step is tried up to %d times", steadyP90, stepTries)}
	c, rcv := s.temporal.Client(), s.rcv
	bc, err := bareClient(s.temporalAddr)
	if err != nil {
		return nil, err
	}
	defer bc.Close()
	wdsFire := func(ctx context.Context) (string, error) { return g.create(ctx) }
	w, err := bareWorker(bc, rcv)
	if err != nil {
		return nil, err
	}
	var seq atomic.Int64
	bareFire := func(ctx context.Context) (string, error) {
		id := fmt.Sprintf("bare-%d", seq.Add(1))
		_, err := bc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: bareQueue}, "BareDelivery",
			rcv.srv.URL+"/bare", id)
		return id, err
	}
	wds, bare := &ladder{what: "wds", fire: wdsFire}, &ladder{what: "bare Temporal", fire: bareFire}
	err = climb(ctx, e, o, rcv, s.cpu, idle, analyze, wds, bare)
	if err == nil {
		err = e.countAsks(ctx, o, res, s, idle, wdsFire, bareFire)
	}
	if err == nil {
		err = idle() // before the bare worker stops: a ladder may end on a steady try whose workflows are closing
	}
	w.Stop()
	if err != nil {
		return nil, err
	}
	res.WDSLadder, res.WDSMaxRate = wds.steps, wds.best
	res.BareLadder, res.BareMaxRate = bare.steps, bare.best
	res.RateRatio = ratio(res.WDSMaxRate, res.BareMaxRate)
	if res.WDSMaxRate > 0 {
		half := math.Round(res.WDSMaxRate/2*10) / 10
		e.logf("webhooks: wds at half its highest steady rate, %.1f/s for %s", half, o.Duration)
		res.HalfRate = paced(ctx, half, o.Duration, rcv, wdsFire)
	}
	// Steps past capacity may still be draining: give every created order's event time to arrive.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if events, _, _ := rcv.dedupe(); events >= int(g.created.Load()) {
			break
		}
	}
	res.Events, res.Duplicates, res.Unreadable = rcv.dedupe()
	res.Missing = int(g.created.Load()) - res.Events
	if res.WDSHistory, err = history(ctx, c, contract.EventWorkflowID(rcv.anyEvent())); err != nil {
		return nil, err
	}
	if res.BareHistory, err = history(ctx, c, "bare-1"); err != nil {
		return nil, err
	}
	return res, nil
}

// bareClient is the bare side's own connection, counting its requests in this process's registry as
// wds's processes count theirs.
func bareClient(address string) (client.Client, error) {
	mh, err := temporalmetrics.Handler()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	c, err := client.Dial(client.Options{HostPort: address, Logger: temporalclient.QuietLogger(), MetricsHandler: mh})
	if err != nil {
		return nil, fmt.Errorf("bench: bare client: %w", err)
	}
	return c, nil
}

// asksRate is slow enough for both sides on any machine: the count is per item, not a capacity.
const asksRate = 10

// countAsks counts the requests to the Temporal server per item of each side.
func (e *env) countAsks(ctx context.Context, o Options, res *WebhookResult, s *stack, idle func() error, wdsFire, bareFire fire) error {
	wdsCounts := func(ctx context.Context) (map[string]float64, error) {
		parts := make([]map[string]float64, len(s.metrics))
		for i, addr := range s.metrics {
			var err error
			if parts[i], err = scrapeRequests(ctx, addr); err != nil {
				return nil, err
			}
		}
		return sumCounts(parts...), nil
	}
	var err error
	if res.WDSAsks, err = measureAsks(ctx, asksRate, o.Duration, s.rcv, wdsFire, idle, wdsCounts); err != nil {
		return err
	}
	e.logf("webhooks: Temporal requests per wds delivery: %s", asksText(res.WDSAsks))
	if res.BareAsks, err = measureAsks(ctx, asksRate, o.Duration, s.rcv, bareFire, idle, bareRequestCounts); err != nil {
		return err
	}
	e.logf("webhooks: Temporal requests per bare workflow: %s", asksText(res.BareAsks))
	return nil
}
