package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"wds/internal/platform/metrics"
)

// Asks is what one delivered item asked of the Temporal server, in requests per item by operation
// (the gRPC method: StartWorkflowExecution, RespondWorkflowTaskCompleted, RecordActivityTaskHeartbeat,
// PollActivityTaskQueue, ...). Both sides count the same way: the Temporal SDK's own request counters,
// read from wds's /metrics and, for the bare workflow, from this process's registry.
type Asks struct {
	Rate       float64            `json:"rate"`
	Items      int                `json:"items"`
	PerItem    map[string]float64 `json:"requests_per_item"`
	TotalCalls float64            `json:"total_per_item"`
}

// requestMetrics are the SDK's counters of calls to the server: long ones are the task polls.
var requestMetrics = []string{"temporal_request_total", "temporal_long_request_total"}

// requestCounts sums the SDK's request counters by operation.
func requestCounts(families map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, name := range requestMetrics {
		f, ok := families[name]
		if !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// scrapeRequests reads the request counters from a process's Prometheus endpoint.
func scrapeRequests(ctx context.Context, addr string) (map[string]float64, error) {
	families, err := scrapeFamilies(ctx, addr)
	if err != nil {
		return nil, err
	}
	return requestCounts(families), nil
}

// sumCounts adds the counts of several processes.
func sumCounts(parts ...map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, p := range parts {
		for k, v := range p {
			out[k] += v
		}
	}
	return out
}

// measureAsks starts items at rate for d on an idle system and divides the requests counted meanwhile
// (through the wait for the last one to finish) by the items delivered.
func measureAsks(ctx context.Context, rate float64, d time.Duration, rcv *receiver, f fire, idle func() error,
	counts func(context.Context) (map[string]float64, error)) (Asks, error) {
	if err := idle(); err != nil {
		return Asks{}, err
	}
	before, err := counts(ctx)
	if err != nil {
		return Asks{}, err
	}
	p := paced(ctx, rate, d, rcv, f)
	if err := idle(); err != nil {
		return Asks{}, err
	}
	after, err := counts(ctx)
	if err != nil {
		return Asks{}, err
	}
	if p.Delivered == 0 {
		return Asks{}, fmt.Errorf("bench: none of %d items arrived while counting requests", p.Sent)
	}
	delta := map[string]float64{}
	for op, v := range after {
		delta[op] = v - before[op]
	}
	return asksOf(delta, p.Delivered, rate), nil
}

// asksOf divides the requests counted, by operation, by the items delivered meanwhile.
func asksOf(counted map[string]float64, items int, rate float64) Asks {
	a := Asks{Rate: rate, Items: items, PerItem: map[string]float64{}}
	if items == 0 {
		return a
	}
	for op, n := range counted {
		if n > 0 {
			per := math.Round(n/float64(items)*100) / 100
			a.PerItem[op] = per
			a.TotalCalls += per
		}
	}
	a.TotalCalls = math.Round(a.TotalCalls*100) / 100
	return a
}

// bareRequestCounts reads the bare side's request counters from this process's registry.
func bareRequestCounts(context.Context) (map[string]float64, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return nil, fmt.Errorf("bench: gather: %w", err)
	}
	byName := make(map[string]*dto.MetricFamily, len(families))
	for _, f := range families {
		byName[f.GetName()] = f
	}
	return requestCounts(byName), nil
}

// asksText lists the operations by requests per item, largest first.
func asksText(a Asks) string {
	ops := make([]string, 0, len(a.PerItem))
	for op := range a.PerItem {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool {
		if a.PerItem[ops[i]] != a.PerItem[ops[j]] {
			return a.PerItem[ops[i]] > a.PerItem[ops[j]]
		}
		return ops[i] < ops[j]
	})
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%s %.2f", op, a.PerItem[op])
	}
	return fmt.Sprintf("%.2f: %s", a.TotalCalls, strings.Join(parts, ", "))
}
