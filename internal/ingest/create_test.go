package ingest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"wds/internal/ingest"
	"wds/internal/platform/problem"
)

// A pooled connection whose socket died unnoticed (idle too briefly to be checked) fails the
// create's first round trip before anything is sent; the create runs again on a fresh connection,
// as database/sql retries a statement, and writes its order once.
func TestACreateRetriesAConnectionThatDied(t *testing.T) {
	db, k := newKey(t)
	ctx := context.Background()
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.SetMaxIdleConns(1)
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Raw(func(dc any) error { return dc.(*stdlib.Conn).Conn().PgConn().Conn().Close() }); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close() // back to the pool, its socket closed under pgx
	email := "ann@example.com"
	res, err := ingest.NewService(db, nil).CreateOrder(ctx, k, ingest.Order{ExternalID: "o-1",
		Client: &ingest.Client{ExternalID: "c-1", Email: &email}, Lines: []ingest.Line{{Quantity: 1, UnitPriceCents: 100}}})
	if err != nil || res.Duplicate {
		t.Fatalf("create: %+v, %v", res, err)
	}
	var orders, events int64
	db.Raw(`SELECT count(*) FROM orders`).Scan(&orders)
	db.Raw(`SELECT count(*) FROM events`).Scan(&events)
	if orders != 1 || events != 2 {
		t.Fatalf("%d orders and %d events, want 1 and 2 (client.created, order.created)", orders, events)
	}
}

// A create refused once its first round trip is in (a payment external_id another payment holds)
// leaves nothing of it: no order, client, claim or event.
func TestARefusedCreateLeavesNothing(t *testing.T) {
	db, k := newKey(t)
	ctx := context.Background()
	s := ingest.NewService(db, nil)
	count := func() (n int64) {
		db.Raw(`SELECT (SELECT count(*) FROM orders) + (SELECT count(*) FROM clients) +
			(SELECT count(*) FROM external_refs) + (SELECT count(*) FROM events)`).Scan(&n)
		return n
	}
	order := func(ext, client string) ingest.Order {
		email := client + "@example.com"
		return ingest.Order{ExternalID: ext, Client: &ingest.Client{ExternalID: client, Email: &email},
			Lines: []ingest.Line{{Quantity: 1, UnitPriceCents: 100}}, Payment: &ingest.Payment{ExternalID: "p-1", AmountCents: 100}}
	}
	if _, err := s.CreateOrder(ctx, k, order("o-1", "c-1")); err != nil {
		t.Fatal(err)
	}
	before := count()
	_, err := s.CreateOrder(ctx, k, order("o-2", "c-2"))
	if !errors.Is(err, problem.Conflict) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	if after := count(); after != before {
		t.Fatalf("the refused create left %d rows", after-before)
	}
}
