package ingest_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"wds/internal/ingest"
)

// BenchmarkCreateOrder creates orders with three lines, a new client and an inline payment in
// parallel; BenchmarkCommitBaseline commits one-row transactions on the same database in the same
// run. Only their ratio means something on a shared machine:
//
//	go test -run XXX -bench . -benchtime 5s ./ingest/
func BenchmarkCreateOrder(b *testing.B) {
	db, k := newKey(b)
	ctx := context.Background()
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprint(n.Add(1))
			email := "c" + id + "@example.com"
			_, err := ingest.NewService(db, nil).CreateOrder(ctx, k, ingest.Order{ExternalID: "o-" + id,
				Client: &ingest.Client{ExternalID: "c-" + id, Email: &email},
				Lines: []ingest.Line{{Quantity: 1, UnitPriceCents: 1000}, {Quantity: 2, UnitPriceCents: 500},
					{Quantity: 3, UnitPriceCents: 100}},
				ShippingCents: 200, TaxCents: 100,
				Payment: &ingest.Payment{ExternalID: "p-" + id, AmountCents: 2600}})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkCommitBaseline(b *testing.B) {
	db, k := newKey(b)
	ctx := context.Background()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			err := db.WithContext(ctx).Exec(`INSERT INTO external_refs (integration_key_id, entity_type, external_id, internal_id)
				VALUES (?, 'order', ?, ?)`, k.ID, uuid.NewString(), uuid.New()).Error
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
