package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"wds/internal/platform/freeport"
	"wds/models"
	"wds/workflows/contract"
)

// recoveryRateLimit is the recovery endpoint's rate limit, the highest an endpoint may have
// (docs/webhooks.md#operator-api): a recovery starts its chains
// at the endpoint's rate limit, or at 10 a second without one, and 10 a second would measure that
// pacing rather than wds. At 1,000 a second the limit is far above what two cores deliver, so the
// recovery runs as fast as wds can start and deliver (every POST still takes its place in the limit).
// The org's budget (WDS_RECOVERY_RATE, 10 a second by default) is raised to the same for this line
// (recoveryWorker); the noisy-neighbour line keeps the default.
const recoveryRateLimit = 1000

// recoveryWorker replaces the stack's worker with one whose org budget is recoveryRateLimit, so the
// recovery line measures how fast wds recovers rather than the budget's pace.
func (e *env) recoveryWorker(ctx context.Context, s *stack) error {
	metrics, err := freeport.Addr()
	if err != nil {
		return err
	}
	s.worker.stop()
	w, err := e.start("worker-recovery", append(s.environ, "WDS_METRICS_ADDR="+metrics,
		"WDS_RECOVERY_RATE="+strconv.Itoa(recoveryRateLimit)), e.wdsBin, "worker")
	if err != nil {
		return err
	}
	s.worker, s.workerMetrics, s.metrics = w, metrics, []string{s.metrics[0], metrics}
	return waitHTTP(ctx, w, "http://"+metrics+"/metrics")
}

// dropChains writes n order.created events of the tenant, already dispatched, each with one dropped
// chain to the endpoint (its fifth attempt answered 500 half an hour ago), in one statement: what a
// receiver's outage leaves for a recovery, which reads only these rows. It returns the order ids the
// receiver will see.
func dropChains(ctx context.Context, s *stack, t *tenant, endpointID uuid.UUID, n int) ([]string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Raw(`WITH e AS (
			SELECT gen_random_uuid() AS id, gen_random_uuid() AS order_id,
				clock_timestamp() - interval '40 minutes' + i * interval '1 microsecond' AS at
			FROM generate_series(1, ?) AS i),
		ev AS (
			INSERT INTO events (id, org_id, store_id, type, body, created_at, dispatched_at)
			SELECT e.id, ?::uuid, ?::uuid, 'order.created', json_build_object('id', e.id, 'type', 'order.created',
				'created_at', e.at, 'org_id', ?::uuid, 'store_id', ?::uuid,
				'data', json_build_object('id', e.order_id, 'object', 'order', 'note', repeat('x', 1300))), e.at, e.at
			FROM e RETURNING id, created_at, body->'data'->>'id' AS order_id),
		d AS (
			INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt,
				status, response_status, error, attempted_at)
			SELECT gen_random_uuid(), ?::uuid, ev.id, ?::uuid, 'order.created', gen_random_uuid(), ? || ev.id, 5,
				'dropped', 500, 'receiver answered 500', ev.created_at + interval '10 minutes'
			FROM ev)
		SELECT order_id FROM ev`, n, t.orgID, t.storeID, t.orgID, t.storeID, t.orgID, endpointID,
		strings.TrimSuffix(contract.EventWorkflowID(uuid.Nil), uuid.Nil.String())).Scan(&ids).Error
	if err != nil {
		return nil, fmt.Errorf("bench: drop %d chains: %w", n, err)
	}
	return ids, nil
}

// recovery drops o.RecoveryChains chains of an endpoint limited to recoveryRateLimit, asks the
// Operator API for a recovery of the last hour, and times it: to its last start (the recovery's
// status leaves running) and to the last arrival.
func (e *env) recovery(ctx context.Context, o Options, s *stack) (RecoveryRun, error) {
	res := RecoveryRun{RateLimit: recoveryRateLimit}
	t, ep, err := e.hookTenant(ctx, s, "Recovery benchmark", "/recover", "--rate-limit", strconv.Itoa(recoveryRateLimit))
	if err != nil {
		return res, err
	}
	ids, err := dropChains(ctx, s, t, ep, o.RecoveryChains)
	if err != nil {
		return res, err
	}
	start := time.Now()
	id, err := recoverEndpoint(ctx, s.base, t.token, ep, start.Add(-time.Hour))
	if err != nil {
		return res, err
	}
	for deadline := start.Add(drainLimit(len(ids))); ; time.Sleep(100 * time.Millisecond) {
		var rec struct {
			Status  string
			Started int
		}
		if err := s.db.WithContext(ctx).Raw("SELECT status, started FROM webhook_recoveries WHERE id = ?", id).Scan(&rec).Error; err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
		if rec.Status != models.RecoveryRunning {
			if rec.Status != models.RecoveryCompleted || rec.Started != len(ids) {
				return res, fmt.Errorf("bench: recovery %s ended %s with %d of %d chains started", id, rec.Status, rec.Started, len(ids))
			}
			break
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("bench: recovery %s: %d of %d chains started after %s", id, rec.Started, len(ids), drainLimit(len(ids)))
		}
	}
	res.StartedSeconds = round1(time.Since(start).Seconds())
	res.StartedRate = round1(float64(len(ids)) / time.Since(start).Seconds())
	if res.Drained, err = drained(ctx, s.rcv, ids, start, drainLimit(len(ids))); err != nil {
		return res, fmt.Errorf("bench: recovery: %w", err)
	}
	res.BusiestSecond = s.rcv.busiestSecond("/recover")
	e.logf("recovery: %d chains started in %.1f s (%.1f/s), delivered in %.1f s (%.1f/s), busiest second %d",
		len(ids), res.StartedSeconds, res.StartedRate, res.Seconds, res.Rate, res.BusiestSecond)
	return res, e.waitIdle(ctx, s)
}

// recoverEndpoint asks for a recovery of the endpoint's chains dropped since, as an owner would
// (POST /admin/v1/endpoints/{id}/recover), and returns the recovery's id.
func recoverEndpoint(ctx context.Context, base, token string, endpointID uuid.UUID, since time.Time) (uuid.UUID, error) {
	body, _ := json.Marshal(map[string]string{"since": since.UTC().Format(time.RFC3339)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/admin/v1/endpoints/"+endpointID.String()+"/recover", bytes.NewReader(body))
	if err != nil {
		return uuid.Nil, fmt.Errorf("bench: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return uuid.Nil, fmt.Errorf("bench: recover: %w", err)
	}
	defer resp.Body.Close()
	var rec struct {
		ID uuid.UUID `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rec); err != nil || resp.StatusCode != http.StatusAccepted {
		return uuid.Nil, fmt.Errorf("bench: recover answered %d (%v)", resp.StatusCode, err)
	}
	return rec.ID, nil
}

// limitedBacklog commits o.LimitedEvents events to an endpoint limited to o.LimitedRate a second
// while no Temporal runs, starts Temporal and a worker, and counts what the receiver sees each
// second until every event arrived or the limit of the measure passed (the count delivered says
// which).
func (e *env) limitedBacklog(ctx context.Context, o Options, s *stack) (LimitedBacklog, error) {
	res := LimitedBacklog{RateLimit: o.LimitedRate}
	t, _, err := e.hookTenant(ctx, s, "Rate-limited backlog benchmark", "/limited", "--rate-limit", strconv.Itoa(o.LimitedRate))
	if err != nil {
		return res, err
	}
	ids, err := commitEvents(ctx, s, t, o.LimitedEvents)
	if err != nil {
		return res, err
	}
	start := time.Now()
	side, err := e.startSide(ctx, s, "worker-limited")
	if err != nil {
		return res, err
	}
	defer side.stop()
	// Six times what the limit allows, and a minute for Temporal to start.
	deadline := start.Add(time.Minute + 6*time.Duration(len(ids)/o.LimitedRate)*time.Second)
	var last time.Time
	for _, id := range ids {
		at, ok := waitArrival(ctx, s.rcv, id, deadline)
		if !ok {
			continue
		}
		res.Delivered++
		if at.After(last) {
			last = at
		}
	}
	if err := side.worker.exited(); err != nil {
		return res, err
	}
	if res.Delivered > 0 {
		secs := last.Sub(start).Seconds()
		res.Drained = Drained{Events: len(ids), Seconds: round1(secs), Rate: round1(float64(res.Delivered) / secs)}
	}
	res.Events = len(ids)
	res.BusiestSecond = s.rcv.busiestSecond("/limited")
	res.Ratio = ratio(res.Rate, float64(res.RateLimit))
	e.logf("rate-limited backlog: %d of %d events delivered in %.1f s (%.1f/s, limit %d/s), busiest second %d",
		res.Delivered, len(ids), res.Seconds, res.Rate, res.RateLimit, res.BusiestSecond)
	return res, nil
}
