package order

import (
	"context"
	"testing"
	"time"

	"wds/internal/platform/paging"
	"wds/test/pgtest"
)

// BenchmarkAppendPage encodes a full list page (50 orders) as the Read API's list endpoint does.
//
//	go test -run XXX -bench . ./order/
func BenchmarkAppendPage(b *testing.B) {
	at := time.Date(2026, 11, 22, 3, 47, 15, 566230000, time.UTC)
	p := paging.Page[Order]{Rows: make([]Order, 50)}
	for i := range p.Rows {
		p.Rows[i] = sampleOrder(b, "1001", "paid", "INV/2026/7", "Shop", at)
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendPage(buf[:0], p)
	}
}

// BenchmarkListOrders loads a page of 50 orders, each with lines and a payment, from PostgreSQL:
// the query, the scan and the decoding of the columns.
func BenchmarkListOrders(b *testing.B) {
	db := pgtest.New(b)
	orgs := seed(b, db, 200)
	err := db.Exec(`INSERT INTO order_lines (order_id, position, description, quantity, unit_price_cents, metadata)
		SELECT id, g, 'Mug', g + 1, 500, '{"sku": "M"}' FROM orders, generate_series(0, 2) g`).Error
	if err == nil {
		err = db.Exec(`INSERT INTO payments (id, order_id, amount_cents, method, paid_at)
			SELECT gen_random_uuid(), id, 100, 'card', now() FROM orders`).Error
	}
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	q := paging.ListQuery{Scope: paging.Scope{OrgID: orgs[0]}, Limit: 50}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := List(ctx, db, q); err != nil {
			b.Fatal(err)
		}
	}
}
