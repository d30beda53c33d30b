package bench

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/sync/errgroup"
)

// dataset is the org the read benchmark walks. Order i (0 = newest) was updated at t0 - i ms: every
// updated_at is distinct, so a position in the list is a cursor (t0 - i ms, the zero UUID) that both the
// HTTP clients and the pgbench script can compute without a lookup.
type dataset struct {
	orgID, storeID uuid.UUID
	t0             time.Time
	orders         int
}

// linesPerOrder and the one payment per order match the ingest request's shape (three lines, an
// inline payment), so the list serves pages as heavy as real ones.
const (
	linesPerOrder = 3
	clientsLoaded = 1000
	shippingCents = 500
	taxCents      = 300
)

// cursorAt is the cursor time that starts a page right after order i.
func (d *dataset) cursorAt(i int) time.Time { return d.t0.Add(-time.Duration(i) * time.Millisecond) }

// LoadResult says how fast the loader wrote the data.
type LoadResult struct {
	Orders     int     `json:"orders"`
	Rows       int     `json:"rows"`
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_second"`
}

// load writes n orders (with lines, a payment each and a pool of clients) into the org with COPY.
// Foreign-key triggers are off for the loader's sessions (session_replication_role = replica): the
// generator makes consistent rows, and per-row RI checks would triple the load time.
func load(ctx context.Context, url string, d *dataset, progress io.Writer) (LoadResult, error) {
	start := time.Now()
	rows := int64(clientsLoaded + d.orders*(2+linesPerOrder))
	bar := progressbar.NewOptions64(rows, progressbar.OptionSetWriter(progress),
		progressbar.OptionSetDescription("loading rows"), progressbar.OptionShowCount(),
		progressbar.OptionShowIts(), progressbar.OptionSetItsString("rows"),
		progressbar.OptionThrottle(250*time.Millisecond), progressbar.OptionSetPredictTime(true),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(progress) }))
	ids := make([]uuid.UUID, d.orders)
	for i := range ids {
		ids[i] = uuid.New()
	}
	clients := make([]uuid.UUID, clientsLoaded)
	for i := range clients {
		clients[i] = uuid.New()
	}
	g, gctx := errgroup.WithContext(ctx)
	copies := []struct {
		table string
		cols  []string
		n     int
		row   func(i int) []any
	}{
		{"clients", []string{"id", "org_id", "store_id", "email", "display_name", "client_type"}, clientsLoaded,
			func(i int) []any {
				return []any{clients[i], d.orgID, d.storeID, fmt.Sprintf("client%d@example.com", i), fmt.Sprintf("Client %d", i), "retail"}
			}},
		{"orders", []string{"id", "org_id", "store_id", "number", "client_id", "external_id", "currency",
			"subtotal_cents", "shipping_cents", "tax_cents", "total_cents", "amount_paid_cents", "status",
			"metadata", "source_kind", "created_at", "updated_at"}, d.orders,
			func(i int) []any {
				sub, total := orderTotals(i)
				at := d.cursorAt(i)
				return []any{ids[i], d.orgID, d.storeID, int64(1001 + i), clients[i%clientsLoaded], "ext-" + strconv.Itoa(i),
					"USD", sub, int64(shippingCents), int64(taxCents), total, total, "paid", `{"channel":"bench"}`, "app", at, at}
			}},
		{"order_lines", []string{"order_id", "position", "description", "quantity", "unit_price_cents", "metadata"},
			d.orders * linesPerOrder,
			func(j int) []any {
				i, k := j/linesPerOrder, j%linesPerOrder
				return []any{ids[i], int32(k), "Item " + strconv.Itoa(k+1), int64(k + 1), unitPrice(i),
					`{"sku":"SKU-` + strconv.Itoa(k+1) + `"}`}
			}},
		{"payments", []string{"id", "order_id", "external_id", "amount_cents", "method", "provider",
			"provider_payment_id", "paid_at", "created_at"}, d.orders,
			func(i int) []any {
				_, total := orderTotals(i)
				at := d.cursorAt(i)
				return []any{uuid.New(), ids[i], "pay-" + strconv.Itoa(i), total, "card", "stripe", "pi_" + strconv.Itoa(i), at, at}
			}},
	}
	for _, c := range copies {
		g.Go(func() error { return copyRows(gctx, url, c.table, c.cols, c.n, c.row, bar) })
	}
	if err := g.Wait(); err != nil {
		return LoadResult{}, err
	}
	_ = bar.Finish()
	if err := settle(ctx, url, d); err != nil {
		return LoadResult{}, err
	}
	secs := time.Since(start).Seconds()
	return LoadResult{Orders: d.orders, Rows: int(rows), Seconds: round1(secs), RowsPerSec: round1(float64(rows) / secs)}, nil
}

func unitPrice(i int) int64 { return int64(1000 + (i%7)*100) }

// orderTotals is the subtotal and total of order i: lines of quantity 1, 2 and 3 at one unit price.
func orderTotals(i int) (sub, total int64) {
	sub = unitPrice(i) * (1 + 2 + 3)
	return sub, sub + shippingCents + taxCents
}

// copyRows streams n generated rows into table over its own connection.
func copyRows(ctx context.Context, url, table string, cols []string, n int, row func(int) []any, bar *progressbar.ProgressBar) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("bench: load %s: %w", table, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET session_replication_role = replica"); err != nil {
		return fmt.Errorf("bench: load %s: %w", table, err)
	}
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		if i%1000 == 999 {
			_ = bar.Add(1000)
		}
		r := row(i)
		i++
		return r, nil
	})
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{table}, cols, src); err != nil {
		return fmt.Errorf("bench: load %s: %w", table, err)
	}
	_ = bar.Add(n % 1000)
	return nil
}

// analyze refreshes the planner's statistics of the whole wds database, as autovacuum would within a
// minute. A measured phase writes into tables that were nearly empty when its warm-up began, and
// wds's connections cache a generic plan per statement from the statistics of that moment: a
// sequential scan of a table of ten rows that has ten thousand by the end of the run. In one profiled
// run such a plan made the client lookup by email cost 1.4 ms a call instead of 0.02, and
// PostgreSQL's CPU per create 2.6 ms instead of 1.7.
// ANALYZE invalidates those plans, so each connection plans again on statistics that describe the
// table it measures, as on a server that has run for more than a minute. pgbench -i ends with a
// VACUUM ANALYZE for the same reason.
func analyze(ctx context.Context, url string) error {
	return execute(ctx, url, "analyze", "ANALYZE")
}

// settle moves the org's order-number sequence past the loaded numbers and vacuums, so the measured
// phases neither collide on numbers nor pay for hint bits and statistics the loader left behind.
func settle(ctx context.Context, url string, d *dataset) error {
	return execute(ctx, url, "settle",
		fmt.Sprintf("SELECT setval(wds_order_number_sequence('%s')::regclass, %d)", d.orgID, 1001+d.orders),
		"VACUUM (ANALYZE) clients, orders, order_lines, payments",
		"CHECKPOINT")
}

// execute runs statements, in order, on a connection of its own; what names the step in errors.
func execute(ctx context.Context, url, what string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("bench: %s: %w", what, err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("bench: %s: %s: %w", what, s, err)
		}
	}
	return nil
}
