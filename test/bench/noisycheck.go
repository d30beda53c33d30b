package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"wds/models"
	"wds/workflows/contract"
)

// route adds paths to the receiver's wds handler (a ServeMux takes routes while it serves).
func (r *receiver) route(paths ...string) {
	mux := r.srv.Config.Handler.(*http.ServeMux)
	for _, p := range paths {
		mux.HandleFunc("POST "+p, r.wds)
	}
}

// receipts is how many deliveries of the event the receiver took.
func (r *receiver) receipts(eventID uuid.UUID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.perEvent[eventID.String()]
}

// searchOutcomes are the outcomes A's searches cycle through: the outage's own, its recovery's, the
// backlog's, and one no event has, which walks the index to its end.
var searchOutcomes = []string{"dropped", "succeeded", "in_progress", "no_endpoints"}

// outcomeSearch is one of A's members searching the org's events by outcome on the Operator API.
func outcomeSearch(base string, t *tenant) func(int) op {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 30 * time.Second}
	return func(c int) op {
		i := c
		return func(ctx context.Context) error {
			q := url.Values{"outcome": {searchOutcomes[i%len(searchOutcomes)]}, "limit": {"50"}}
			i++
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/admin/v1/orgs/"+t.orgID.String()+"/events?"+q.Encode(), nil)
			req.Header.Set("Authorization", "Bearer "+t.token)
			resp, err := client.Do(req)
			if err != nil {
				return fmt.Errorf("event search: %w", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("event search: %d %s", resp.StatusCode, truncate(string(body), 200))
			}
			return nil
		}
	}
}

// pacedSample calls f at rate per second for d, each call in its own goroutine (a slow answer does
// not delay the next request, as independent users' would not), and records every call's latency.
func pacedSample(ctx context.Context, rate float64, d time.Duration, f func(context.Context) error) sample {
	var (
		mu sync.Mutex
		s  = sample{clients: 1}
		wg sync.WaitGroup
	)
	start := time.Now()
	for i := range int(rate * d.Seconds()) {
		time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
		wg.Go(func() {
			t := time.Now()
			err := f(ctx)
			lat := time.Since(t)
			mu.Lock()
			defer mu.Unlock()
			s.ops++
			s.lat = append(s.lat, lat)
			if err != nil {
				s.errors++
				if s.firstErr == "" {
					s.firstErr = err.Error()
				}
			}
		})
	}
	wg.Wait()
	s.seconds = time.Since(start).Seconds()
	return s
}

// checkRecovery waits until the recovery has started every chain and the receiver took every
// recovered event, then counts: dispatches of the recovery and the delivery rows they re-fire (the
// newest chains, each once), successful attempts of their chains, and receipts of their events.
func checkRecovery(ctx context.Context, s *stack, id uuid.UUID, chains int, since, start time.Time) (NoisyRecovery, error) {
	res := NoisyRecovery{Chains: chains}
	deadline := start.Add(drainLimit(chains))
	var events []uuid.UUID
	for {
		var status string
		if err := s.db.WithContext(ctx).Raw("SELECT status FROM webhook_recoveries WHERE id = ?", id).Scan(&status).Error; err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
		if status != models.RecoveryRunning {
			if err := s.db.WithContext(ctx).Raw("SELECT event_id FROM webhook_dispatches WHERE recovery_id = ?", id).Scan(&events).Error; err != nil {
				return res, fmt.Errorf("bench: %w", err)
			}
			if received(s.rcv, events) == len(events) {
				break
			}
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("bench: recovery %s ended %q, %d of its %d chains received after %s",
				id, status, received(s.rcv, events), len(events), drainLimit(chains))
		}
		time.Sleep(200 * time.Millisecond)
	}
	res.Seconds = round1(time.Since(start).Seconds())
	// A late duplicate would come from an attempt retried after its POST; give it the time one takes.
	time.Sleep(2 * time.Second)
	var c struct{ Dispatches, Refired, InWindow, Succeeded int }
	err := s.db.WithContext(ctx).Raw(`SELECT count(*) AS dispatches, count(DISTINCT p.refired_delivery_id) AS refired,
			count(*) FILTER (WHERE d.status = 'dropped' AND d.attempted_at >= ?) AS in_window,
			(SELECT count(*) FROM webhook_deliveries x JOIN webhook_dispatches y ON y.chain_id = x.chain_id
				WHERE y.recovery_id = ? AND x.status = 'succeeded') AS succeeded
		FROM webhook_dispatches p JOIN webhook_deliveries d ON d.id = p.refired_delivery_id WHERE p.recovery_id = ?`,
		since, id, id).Scan(&c).Error
	if err != nil {
		return res, fmt.Errorf("bench: count the recovery's dispatches: %w", err)
	}
	res.Dispatches, res.Distinct, res.InWindow, res.Succeeded = c.Dispatches, c.Refired, c.InWindow, c.Succeeded
	for _, ev := range events {
		switch n := s.rcv.receipts(ev); {
		case n == 0:
			res.Missing++
		default:
			res.Received++
			res.Duplicates += n - 1
		}
	}
	res.ExactlyOnce = res.exactlyOnce()
	return res, nil
}

// exactlyOnce is every chain of the recovery re-fired by one dispatch of its own, among the newest
// chains, delivered by one successful attempt and received once.
func (r NoisyRecovery) exactlyOnce() bool {
	c := r.Chains
	return c > 0 && r.Dispatches == c && r.Distinct == c && r.InWindow == c && r.Succeeded == c && r.Received == c &&
		r.Missing == 0 && r.Duplicates == 0
}

// received is how many of the events the receiver took at least once.
func received(rcv *receiver, events []uuid.UUID) int {
	n := 0
	for _, ev := range events {
		if rcv.receipts(ev) > 0 {
			n++
		}
	}
	return n
}

// recoveryBatches are the times of each batch that started chains, in order, across every run of the
// recovery's workflow (it continues as new every 500 batches): each batch's transaction, which takes
// and queues its chains (RecoveryBatch.Took), not its activity, which spreads the starts over its
// second.
func recoveryBatches(ctx context.Context, s *stack, id uuid.UUID) ([]float64, error) {
	runs, err := recoveryRuns(ctx, s, id)
	if err != nil {
		return nil, err
	}
	var out []float64
	last := 0
	for _, run := range runs {
		it := s.temporal.Client().GetWorkflowHistory(ctx, contract.RecoveryWorkflowID(id), run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return nil, fmt.Errorf("bench: recovery history: %w", err)
			}
			a := ev.GetActivityTaskCompletedEventAttributes()
			if a == nil {
				continue
			}
			var b contract.RecoveryBatch
			if err := converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), &b); err != nil {
				return nil, fmt.Errorf("bench: recovery batch result: %w", err)
			}
			if b.Started > last {
				out = append(out, ms(b.Took))
			}
			last = b.Started
		}
	}
	return out, nil
}

// recoveryRuns are the runs of a recovery's workflow, oldest first: a long one continues as new.
func recoveryRuns(ctx context.Context, s *stack, id uuid.UUID) ([]string, error) {
	resp, err := s.temporal.Client().ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("WorkflowId = '%s'", contract.RecoveryWorkflowID(id))})
	if err != nil {
		return nil, fmt.Errorf("bench: recovery runs: %w", err)
	}
	execs := resp.GetExecutions()
	slices.SortFunc(execs, func(a, b *workflowpb.WorkflowExecutionInfo) int {
		return a.GetStartTime().AsTime().Compare(b.GetStartTime().AsTime())
	})
	runs := make([]string, len(execs))
	for i, x := range execs {
		runs[i] = x.GetExecution().GetRunId()
	}
	return runs, nil
}

// firstLast compares the last batch with the first.
func firstLast(batches []float64) NoisyBatchRatio {
	if len(batches) == 0 {
		return NoisyBatchRatio{}
	}
	f, l := batches[0], batches[len(batches)-1]
	return NoisyBatchRatio{FirstMs: f, LastMs: l, Ratio: ratio(l, f)}
}

// noisyHeader gives the noisy-neighbour lines' own run conditions: `-only noisy` measures them apart.
func noisyHeader(b *bytes.Buffer, r *NoisyResult) {
	if r != nil {
		fmt.Fprintf(b, "The noisy-neighbour lines: run of %s, load average %s at their start, %s at their end; code measured: %s.\n\n",
			r.StartedAt.Format("2006-01-02 15:04 MST"), r.LoadStart, r.LoadEnd, r.Source)
	}
}

// noisyRows are the noisy-neighbour line's rows of the results table.
func noisyRows(r *NoisyResult) []row {
	if r == nil {
		return nil
	}
	q, qa, n, rc := r.Quiet, r.QuietAfter, r.Noisy, r.Recovery
	rows := []row{
		{fmt.Sprintf("Noisy neighbour: org B's p99 beside org A's recovery of %d of %d dropped chains (%d delivery rows), "+
			"%d events held at 1/s, %d outcome searches and %d members reading the log and the overview (%.0f s windows)",
			rc.Chains, r.Dropped, r.Rows, r.HeldEvents, r.Search.Clients, r.Member.Clients, r.Seconds),
			fmt.Sprintf("create %.1f ms, page %.1f ms, order to receipt %.1f ms", n.Creates.AckP99Ms, n.Pages.P99Ms, n.Creates.P99Ms),
			fmt.Sprintf("create %.1f / %.1f ms, page %.1f / %.1f ms, order to receipt %.1f / %.1f ms (B alone before / after)",
				q.Creates.AckP99Ms, qa.Creates.AckP99Ms, q.Pages.P99Ms, qa.Pages.P99Ms, q.Creates.P99Ms, qa.Creates.P99Ms),
			fmt.Sprintf("%.2f / %.2f / %.2f", r.CreateRatio, r.PageRatio, r.ReceiptRatio), "each <= 1.5",
			met(r.CreateRatio <= 1.5 && r.PageRatio <= 1.5 && r.ReceiptRatio <= 1.5)},
		{"Noisy neighbour: org A's recovered chains", fmt.Sprintf("%d dispatches for %d chains, %d succeeded, %d received, "+
			"%d missing, %d duplicates; all received after %.0f s; searches p99 %.1f ms (%d, %d errors); members' reads "+
			"p99 %.1f ms (%d, %d of them paced, %d errors)", rc.Dispatches, rc.Chains, rc.Succeeded, rc.Received, rc.Missing,
			rc.Duplicates, rc.Seconds, r.Search.P99Ms, r.Search.Ops, r.Search.Errors, r.Member.P99Ms, r.Member.Ops,
			r.MemberPaced, r.Member.Errors),
			"", "", "each exactly once", met(rc.ExactlyOnce)},
		{fmt.Sprintf("Noisy neighbour: org A's recovery, last batch / first (%d batches)", len(r.Batches)),
			fmt.Sprintf("%.1f / %.1f ms", r.Batch.LastMs, r.Batch.FirstMs), "", fmt.Sprintf("%.2f", r.Batch.Ratio), "<= 1.5",
			met(r.Batch.Ratio > 0 && r.Batch.Ratio <= 1.5)},
	}
	if n.Waits.String() == "" { // results of runs before the waits were recorded
		return rows
	}
	return slices.Insert(rows, 2, row{"Noisy neighbour: what the stack waited on during B's windows (turns at the database and the database's active sessions)",
		"beside A: " + n.Waits.String(), "B alone before: " + q.Waits.String() + "; after: " + qa.Waits.String(),
		"", "found, to explain the p99s", ""})
}
