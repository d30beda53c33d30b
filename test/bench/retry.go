package bench

import (
	"context"
	"fmt"
	"maps"
	"time"

	"go.temporal.io/api/workflowservice/v1"
)

// RetryCost is what a failing attempt followed by a ladder timer costs: events whose first attempt
// fails with a 500 and whose retry, after the ladder's first delay, succeeds, against events
// delivered at the first attempt, in alternating rounds on one Temporal server and one worker. The
// figures per retry are the per-event figures of the first kind less those of the second.
type RetryCost struct {
	Temporal       string `json:"temporal"`
	Ladder         string `json:"ladder"`
	EventsPerRound int    `json:"events_per_round"`
	Rounds         int    `json:"rounds"`
	// Retries is the first POSTs the receiver failed during the rounds: one for each failed-once event.
	Retries int `json:"retries"`
	// CPU milliseconds per event by process, each side over its rounds, and their difference.
	FirstCPU      map[string]float64 `json:"first_attempt_cpu_ms_per_event"`
	FailedOnceCPU map[string]float64 `json:"failed_once_cpu_ms_per_event"`
	CPU           map[string]float64 `json:"cpu_ms_per_retry"`
	TemporalCPU   float64            `json:"temporal_cpu_ms_per_retry"`
	// The worker's requests to Temporal per event, each side, and their difference by operation.
	FirstAsks      Asks               `json:"first_attempt_requests"`
	FailedOnceAsks Asks               `json:"failed_once_requests"`
	Requests       map[string]float64 `json:"requests_per_retry"`
	RequestsTotal  float64            `json:"total_requests_per_retry"`
	// The history of one event of each side, and the events a retry adds.
	FirstHistory      History `json:"first_attempt_history"`
	FailedOnceHistory History `json:"failed_once_history"`
	HistoryEvents     int     `json:"history_events_per_retry"`
}

// retryLadder is the side's WDS_WEBHOOK_RETRY_SCHEDULE: the retry is due a second after the first
// attempt, so the line waits little on the timer it measures.
const retryLadder = "1s"

// retryCost runs o.ScaleRounds rounds on a fresh dev server and worker with a 1 s ladder, each round
// o.ScaleEvents events to an endpoint that takes them at once, then as many to one that fails each
// event's first POST (the receiver's /once). Each side is counted from its commit until every
// workflow has closed, so a workflow's last task is counted too; the stack's worker must be stopped,
// as its relay would start the events on the stack's Temporal.
func (e *env) retryCost(ctx context.Context, o Options, s *stack) (RetryCost, error) {
	res := RetryCost{Ladder: retryLadder, EventsPerRound: o.ScaleEvents, Rounds: o.ScaleRounds}
	first, _, err := e.hookTenant(ctx, s, "Retry benchmark, first attempt", "/hook")
	if err != nil {
		return res, err
	}
	once, _, err := e.hookTenant(ctx, s, "Retry benchmark, failed once", "/once")
	if err != nil {
		return res, err
	}
	side, err := e.startSide(ctx, s, "worker-retry", "WDS_WEBHOOK_RETRY_SCHEDULE="+retryLadder)
	if err != nil {
		return res, err
	}
	defer side.stop()
	ss, err := e.sideView(ctx, s, side)
	if err != nil {
		return res, err
	}
	res.Temporal = ss.temporalDesc
	if v, err := side.temporal.Client().WorkflowService().GetSystemInfo(ctx, &workflowservice.GetSystemInfoRequest{}); err == nil {
		res.Temporal += ", server " + v.GetServerVersion()
	}
	// Untimed: the fresh worker's connections and the first timer would weigh most in a short run.
	for _, t := range []*tenant{first, once} {
		if _, err := e.deliverAll(ctx, ss, t, warmUpEvents); err != nil {
			return res, fmt.Errorf("bench: retry warm-up: %w", err)
		}
	}
	failedBefore := s.rcv.failedFirst()
	firstCPU, onceCPU, firstAsks, onceAsks := map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
	var firstRounds, onceRounds []Drained
	workerCounts := func(ctx context.Context) (map[string]float64, error) { return scrapeRequests(ctx, ss.workerMetrics) }
	for round := range o.ScaleRounds {
		for _, side := range []struct {
			t         *tenant
			cpu, asks map[string]float64
			rounds    *[]Drained
		}{{first, firstCPU, firstAsks, &firstRounds}, {once, onceCPU, onceAsks, &onceRounds}} {
			var d Drained
			if err := counted(ctx, workerCounts, side.asks, ss.cpu.metered(side.cpu, func() (sample, error) {
				d, err = e.deliverAll(ctx, ss, side.t, o.ScaleEvents)
				return sample{}, err
			})); err != nil {
				return res, fmt.Errorf("bench: retry round %d: %w", round+1, err)
			}
			*side.rounds = append(*side.rounds, d)
		}
		e.logf("retry, round %d: %d events at the first attempt in %.1f s, %d failed once in %.1f s", round+1,
			o.ScaleEvents, firstRounds[round].Seconds, o.ScaleEvents, onceRounds[round].Seconds)
	}
	n := o.ScaleEvents * o.ScaleRounds
	if res.Retries = s.rcv.failedFirst() - failedBefore; res.Retries != n {
		return res, fmt.Errorf("bench: retry: the receiver failed %d first POSTs for %d events", res.Retries, n)
	}
	firstHist, err := e.firstEventHistory(ctx, ss, first)
	if err != nil {
		return res, err
	}
	onceHist, err := e.firstEventHistory(ctx, ss, once)
	if err != nil {
		return res, err
	}
	res = retryCostOf(res, perOp(firstCPU, n), perOp(onceCPU, n), asksOf(firstAsks, n, pooledRate(firstRounds)),
		asksOf(onceAsks, n, pooledRate(onceRounds)), firstHist, onceHist)
	e.logf("%s", retryLine(res))
	return res, nil
}

// deliverAll commits n events of the tenant and waits until each has arrived and every workflow has
// closed; the time is to the last arrival.
func (e *env) deliverAll(ctx context.Context, s *stack, t *tenant, n int) (Drained, error) {
	start := time.Now()
	ids, err := commitEvents(ctx, s, t, n)
	if err != nil {
		return Drained{}, err
	}
	d, err := drained(ctx, s.rcv, ids, start, drainLimit(n))
	if err != nil {
		return Drained{}, err
	}
	return d, e.waitIdle(ctx, s)
}

// sideView is the stack as seen from a side stack: its Temporal server and worker, metered in their
// place, once the worker answers on its metrics address.
func (e *env) sideView(ctx context.Context, s *stack, side *sideStack) (*stack, error) {
	if err := waitHTTP(ctx, side.worker, "http://"+side.metrics+"/metrics"); err != nil {
		return nil, err
	}
	ss := *s
	ss.temporal, ss.temporalAddr, ss.worker, ss.workerMetrics = side.temporal, side.temporal.Address, side.worker, side.metrics
	ss.cpu = e.devMeter(s.serve, side.worker, side.temporal.Address)
	return &ss, nil
}

// retryCostOf fills in the per-event figures of each side and what a retry adds to them.
func retryCostOf(res RetryCost, firstCPU, onceCPU map[string]float64, firstAsks, onceAsks Asks, firstHist, onceHist History) RetryCost {
	res.FirstCPU, res.FailedOnceCPU = firstCPU, onceCPU
	res.CPU = perRetry(onceCPU, firstCPU)
	res.TemporalCPU = temporalCPU(res.CPU)
	res.FirstAsks, res.FailedOnceAsks = firstAsks, onceAsks
	res.Requests = perRetry(onceAsks.PerItem, firstAsks.PerItem)
	maps.DeleteFunc(res.Requests, func(_ string, v float64) bool { return v == 0 })
	res.RequestsTotal = round2(onceAsks.TotalCalls - firstAsks.TotalCalls)
	res.FirstHistory, res.FailedOnceHistory = firstHist, onceHist
	res.HistoryEvents = onceHist.Events - firstHist.Events
	return res
}

// perRetry is what the failed attempt and its timer add to an event: the per-event figures of events
// that failed once less those of events delivered at the first attempt, key by key.
func perRetry(failedOnce, firstAttempt map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range failedOnce {
		out[k] = round2(v - firstAttempt[k])
	}
	for k, v := range firstAttempt {
		if _, ok := failedOnce[k]; !ok {
			out[k] = round2(-v)
		}
	}
	return out
}

// retryLine is the retry line for the log.
func retryLine(r RetryCost) string {
	return fmt.Sprintf("retry (ladder %s, %d events failed once against %d at the first attempt): per retry %+d history events "+
		"(%d against %d), Temporal requests %s, CPU ms Temporal %.2f, wds worker %.2f, PostgreSQL %.2f",
		r.Ladder, r.Retries, r.EventsPerRound*r.Rounds, r.HistoryEvents, r.FailedOnceHistory.Events, r.FirstHistory.Events,
		asksText(Asks{PerItem: r.Requests, TotalCalls: r.RequestsTotal}), r.TemporalCPU, r.CPU["wds worker"], r.CPU["postgres"])
}

// retryKinds names a history's events by kind, for the rendered row.
func retryKinds(h History) string {
	return fmt.Sprintf("%d history events (workflow tasks %d, activity tasks %d, markers %d, timers %d)",
		h.Events, h.WorkflowTasks, h.Activities, h.Markers, h.Timers)
}
