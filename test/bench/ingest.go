package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"wds/internal/apikeys"
	"wds/internal/platform/secrets"
	"wds/models"
)

// IngestResult is the Integration API order-create benchmark beside pgbench replaying the statements
// of one create (the baseline of the target) and pgbench's TPC-B-like script (a reference line).
type IngestResult struct {
	WDS             Measure `json:"wds"`
	Replay          Measure `json:"pgbench_replay"`
	PGBench         Measure `json:"pgbench_tpcb"`
	PGBenchScale    int     `json:"pgbench_scale"`
	ReplayRatio     float64 `json:"replay_throughput_ratio"`
	ThroughputRatio float64 `json:"throughput_ratio"`
	// CPU milliseconds per create (wds), per replayed create and per TPC-B transaction, by process.
	CPUPerOrder    map[string]float64 `json:"cpu_ms_per_order"`
	CPUPerReplayTx map[string]float64 `json:"cpu_ms_per_replay_tx"`
	CPUPerTPCBTx   map[string]float64 `json:"cpu_ms_per_tpcb_tx"`
	Created        int                `json:"created"`
	Verified       string             `json:"verified"`
	ReplayVerified string             `json:"replay_verified"`
	// ReplayScript is the pgbench script; ReplayDefs its constants (pgbench -D).
	ReplayScript string            `json:"replay_script"`
	ReplayDefs   map[string]string `json:"replay_defs"`
}

// intKeyBudget stays under the largest per-key limit an integration key can have (6000 a minute).
const intKeyBudget = 5000

// minIntKeys is more keys than the benchmark has clients, so requests in flight together do not
// share one, and enough that the replay, which turns over the same keys, stays under each key's
// limit up to 6,400 creates a second.
const minIntKeys = 64

// ingester drives POST /integrations/v1/orders with distinct external ids.
type ingester struct {
	base    string
	client  *http.Client
	keys    *keyPool
	prefix  string // distinguishes this run's external ids
	seq     atomic.Int64
	created atomic.Int64
	payment bool // send the inline payment (the ingest benchmark); the webhook benchmark does not
}

// mintIntegrationKeys mints n generic keys of the tenant's store at the highest rate limit.
func mintIntegrationKeys(ctx context.Context, db *gorm.DB, box *secrets.Box, t *tenant, n int) (*keyPool, error) {
	keys := make([]string, n)
	for i := range keys {
		k, err := apikeys.NewService(db, box).CreateIntegrationKey(ctx, apikeys.NewIntegrationKey{OrgID: t.orgID, StoreID: t.storeID,
			ActorID: t.ownerID, Label: fmt.Sprintf("bench %d", i), RateLimit: apikeys.MaxRateLimit,
			Scopes: []string{models.ScopeOrdersWrite, models.ScopePaymentsWrite}})
		if err != nil {
			return nil, fmt.Errorf("bench: mint integration key: %w", err)
		}
		keys[i] = k.Plaintext
	}
	return &keyPool{keys: keys, perKey: intKeyBudget}, nil
}

// orderBody is a create request: three lines, a new client and, if asked, an inline payment of the
// whole total, so the order is created paid with order.created and payment.recorded events. Only the
// external ids differ between requests, so the JSON is written once (orderParts) and each request
// puts its own id into it: encoding a map per request cost the load generator, which shares the two
// cores with what it measures, more than the server spent decoding it.
func (g *ingester) orderBody(n int64) []byte {
	parts := orderParts[0]
	if g.payment {
		parts = orderParts[1]
	}
	return bytes.Join(parts, []byte(g.prefix+strconv.FormatInt(n, 10)))
}

// orderParts are a create request's JSON without a payment and with one, cut where the order's
// external id goes.
var orderParts = [2][][]byte{orderTemplate(false), orderTemplate(true)}

// idSlot marks the external id in the template: a NUL, which no id holds, so nothing else is cut.
const idSlot = "\x00id\x00"

func orderTemplate(payment bool) [][]byte {
	body := map[string]any{
		"external_id": idSlot, "currency": "USD", "shipping_cents": shippingCents, "tax_cents": taxCents,
		"metadata": map[string]any{"channel": "bench"},
		"client": map[string]any{"external_id": "client-" + idSlot, "email": "c-" + idSlot + "@example.com",
			"display_name": "Client " + idSlot, "client_type": "retail"},
		"lines": []map[string]any{
			{"description": "Item 1", "quantity": 1, "unit_price_cents": 1500, "metadata": map[string]any{"sku": "SKU-1"}},
			{"description": "Item 2", "quantity": 2, "unit_price_cents": 1500, "metadata": map[string]any{"sku": "SKU-2"}},
			{"description": "Item 3", "quantity": 3, "unit_price_cents": 1500, "metadata": map[string]any{"sku": "SKU-3"}},
		},
	}
	if payment {
		body["payment"] = map[string]any{"external_id": "pay-" + idSlot, "amount_cents": 6*1500 + shippingCents + taxCents,
			"method": "card", "provider": "stripe", "provider_payment_id": "pi_" + idSlot}
	}
	b, _ := json.Marshal(body)
	slot, _ := json.Marshal(idSlot) // as encoding/json writes it, quoted
	return bytes.Split(b, slot[1:len(slot)-1])
}

// create posts one new order and returns its id; anything but 201 is an error.
func (g *ingester) create(ctx context.Context) (string, error) {
	key, err := g.keys.get()
	if err != nil {
		return "", err
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.base+"/integrations/v1/orders",
		bytes.NewReader(g.orderBody(g.seq.Add(1))))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("POST /integrations/v1/orders: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("POST /integrations/v1/orders: read body: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("POST /integrations/v1/orders: %d %s", resp.StatusCode, truncate(string(b), 200))
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.ID == "" {
		return "", fmt.Errorf("POST /integrations/v1/orders: no id in %s", truncate(string(b), 200))
	}
	g.created.Add(1)
	return out.ID, nil
}

// runIngest measures order creation against the replay of its statements and TPC-B on the same
// cluster and then checks, in the database, that every answered create and every replayed one left
// exactly one order with its lines, payment and events.
func (e *env) runIngest(ctx context.Context, o Options, g *ingester, rep *replay, cpu *cpuMeter, dbURL string, t *tenant) (*IngestResult, error) {
	res := &IngestResult{PGBenchScale: o.TPCBScale, ReplayScript: rep.script, ReplayDefs: rep.defs}
	create := func(int) op { return func(ctx context.Context) error { _, err := g.create(ctx); return err } }
	e.logf("ingest: warm-up, %d clients, %s", o.Clients, o.Warmup)
	drive(ctx, o.Clients, o.Warmup, create)
	if err := analyze(ctx, dbURL); err != nil {
		return nil, err
	}
	e.logf("ingest: %d clients, %s each for wds, pgbench replaying a create and pgbench TPC-B (scale %d) in %d alternating rounds",
		o.Clients, o.Duration, o.TPCBScale, o.Rounds)
	per := o.Duration / time.Duration(o.Rounds)
	seconds := max(1, int(per.Round(time.Second)/time.Second))
	script := filepath.Join(e.dir, "create.sql") // not replay.*, which names the transaction logs
	if err := os.WriteFile(script, []byte(rep.script), 0o644); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	round := 0
	wdsCPU, replayCPU, pgCPU := map[string]float64{}, map[string]float64{}, map[string]float64{}
	m, err := alternate(o.Rounds, cpu.metered(wdsCPU, func() (sample, error) {
		return drive(ctx, o.Clients, per, create), nil
	}), cpu.metered(replayCPU, func() (sample, error) {
		round++
		return e.pgbench(ctx, pgbenchSpec{db: "wds", name: "replay", script: script, clients: o.Clients, seconds: seconds,
			defs: rep.run(fmt.Sprintf("%s%d", replayPrefix, round), o.Clients)})
	}), cpu.metered(pgCPU, func() (sample, error) {
		return e.pgbench(ctx, pgbenchSpec{db: "pgbench", name: "tpcb", clients: o.Clients, seconds: seconds})
	}))
	if err != nil {
		return nil, err
	}
	res.WDS, res.Replay, res.PGBench = m[0], m[1], m[2]
	res.CPUPerOrder, res.CPUPerReplayTx, res.CPUPerTPCBTx = perOp(wdsCPU, res.WDS.Ops), perOp(replayCPU, res.Replay.Ops), perOp(pgCPU, res.PGBench.Ops)
	res.ReplayRatio = ratio(res.WDS.PerSecond, res.Replay.PerSecond)
	res.ThroughputRatio = ratio(res.WDS.PerSecond, res.PGBench.PerSecond)
	res.Created = int(g.created.Load())
	if res.Verified, err = verifyIngest(ctx, dbURL, t, g.prefix, res.Created); err != nil {
		return nil, err
	}
	if res.ReplayVerified, err = verifyIngest(ctx, dbURL, t, replayPrefix, res.Replay.Ops); err != nil {
		return nil, fmt.Errorf("bench: the replay did not do a create's work: %w", err)
	}
	return res, nil
}

// verifyIngest counts what the creates left behind: one order per 201, three lines and one payment
// each, and one order.created and one payment.recorded event per order.
func verifyIngest(ctx context.Context, dbURL string, t *tenant, prefix string, created int) (string, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "", fmt.Errorf("bench: verify ingest: %w", err)
	}
	defer conn.Close(ctx)
	checks := []struct {
		what string
		sql  string
		want int
	}{
		{"orders", `SELECT count(*) FROM orders WHERE org_id = $1 AND external_id LIKE $2`, created},
		{"order lines", `SELECT count(*) FROM order_lines l JOIN orders o ON o.id = l.order_id
			WHERE o.org_id = $1 AND o.external_id LIKE $2`, created * linesPerOrder},
		{"payments", `SELECT count(*) FROM payments p JOIN orders o ON o.id = p.order_id
			WHERE o.org_id = $1 AND o.external_id LIKE $2`, created},
		{"order.created events", `SELECT count(*) FROM events WHERE org_id = $1 AND type = 'order.created'
			AND body::jsonb #>> '{data,external_id}' LIKE $2`, created},
		{"payment.recorded events", `SELECT count(*) FROM events WHERE org_id = $1 AND type = 'payment.recorded'
			AND body::jsonb #>> '{data,order,external_id}' LIKE $2`, created},
	}
	var got []string
	for _, c := range checks {
		var n int
		if err := conn.QueryRow(ctx, c.sql, t.orgID, prefix+"%").Scan(&n); err != nil {
			return "", fmt.Errorf("bench: verify ingest %s: %w", c.what, err)
		}
		if n != c.want {
			return "", fmt.Errorf("bench: ingest left %d %s for %d created orders, want %d", n, c.what, created, c.want)
		}
		got = append(got, fmt.Sprintf("%d %s", n, c.what))
	}
	return strings.Join(got, ", ") + fmt.Sprintf(" for %d creates", created), nil
}

// initTPCB creates pgbench's own tables in a database of their own on the same cluster.
func (e *env) initTPCB(ctx context.Context, scale int) error {
	if _, err := e.createDB(ctx, "pgbench"); err != nil {
		return err
	}
	return e.pgbenchInit(ctx, "pgbench", scale)
}

// newIngester builds a load generator for the tenant, with keys enough for n requests.
func newIngester(ctx context.Context, db *gorm.DB, box *secrets.Box, t *tenant, base, prefix string, n int, payment bool) (*ingester, error) {
	keys, err := mintIntegrationKeys(ctx, db, box, t, max(n/intKeyBudget+1, minIntKeys))
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	return &ingester{base: base, client: client, keys: keys, prefix: prefix, payment: payment}, nil
}
