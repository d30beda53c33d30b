package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// clientDeadline is how long a load request waits for its answer: past the server's own
// per-request deadline, so a request that hangs past it shows as a hang here.
const clientDeadline = 40 * time.Second

// load keeps a steady stream of order creates going and sorts every answer.
type load struct {
	base, key string
	client    *http.Client
	seq       atomic.Int64

	mu          sync.Mutex
	classes     map[string]int    // "2xx", "503", ... -> answers
	created     map[string]string // external id -> order id, for every 201
	unavailable []string          // external ids answered 503
	problems    []string          // answers that break the contract: 500, a hang, a bad shape
	slowest     time.Duration
}

func newLoad(s *system) *load {
	return &load{base: s.base, key: s.key, client: &http.Client{Timeout: clientDeadline},
		classes: map[string]int{}, created: map[string]string{}}
}

// run sends perSecond creates a second until ctx ends, then waits for the answers in flight.
func (l *load) run(ctx context.Context, perSecond int) {
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	defer tick.Stop()
	var wg sync.WaitGroup
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.create()
			}()
		}
	}
}

func (l *load) create() {
	id := fmt.Sprintf("chaos-%d", l.seq.Add(1))
	body, _ := json.Marshal(map[string]any{"external_id": id, "currency": "USD",
		"lines": []map[string]any{{"description": "Mug", "quantity": 2, "unit_price_cents": 1500}}})
	req, _ := http.NewRequest(http.MethodPost, l.target()+"/integrations/v1/orders", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+l.key)
	req.Header.Set("Content-Type", "application/json")
	// As an integrator sends it. It also lets the HTTP client send the create again on a kept-alive
	// connection a replaced serve closed just as the request went out (net/http retries a request
	// with an Idempotency-Key there), instead of reporting "connection reset by peer"; the server
	// answers a repeat with the first answer.
	req.Header.Set("Idempotency-Key", id)
	began := time.Now()
	resp, err := l.client.Do(req)
	took := time.Since(began)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.slowest = max(l.slowest, took)
	if err != nil {
		l.classes["no answer"]++
		l.problems = append(l.problems, fmt.Sprintf("%s: no answer after %v: %v", id, took.Round(time.Millisecond), err))
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	l.sort(id, resp, b)
}

// sort files one answer (with mu held): 201 with the order, 503 in the error shape with
// Retry-After, or a problem.
func (l *load) sort(id string, resp *http.Response, b []byte) {
	var out struct {
		ID     string `json:"id"`
		Error  string `json:"error"`
		Detail string `json:"detail"`
	}
	_ = json.Unmarshal(b, &out)
	switch {
	case resp.StatusCode == http.StatusCreated && out.ID != "":
		l.classes["2xx"]++
		l.created[id] = out.ID
	case resp.StatusCode == http.StatusServiceUnavailable && out.Error == "unavailable" && out.Detail != "" &&
		resp.Header.Get("Retry-After") != "":
		l.classes["503"]++
		l.unavailable = append(l.unavailable, id)
	default:
		l.classes[fmt.Sprintf("%dxx", resp.StatusCode/100)]++
		l.problems = append(l.problems, fmt.Sprintf("%s: %d %s", id, resp.StatusCode, b))
	}
}

// target is the serve the load is sent to.
func (l *load) target() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.base
}

// retarget sends the load to another serve from now on, as a load balancer does when a deploy
// replaces an instance; requests in flight finish on the one they went to.
func (l *load) retarget(base string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.base = base
}

// answers is the count by status class, e.g. "2xx 412, 503 37".
func (l *load) answers() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for _, c := range []string{"2xx", "4xx", "503", "5xx", "no answer"} {
		if n := l.classes[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	return strings.Join(parts, ", ")
}

func (l *load) count(class string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.classes[class]
}
