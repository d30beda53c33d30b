package views

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/models"
)

// plainOrder is Order without its methods: what encoding/json writes from the struct's tags, the
// reference AppendJSON must match.
type plainOrder Order

// checkOrderJSON fails unless AppendJSON, compacted, is byte for byte what encoding/json writes.
func checkOrderJSON(t *testing.T, o Order) {
	t.Helper()
	want, err := json.Marshal(plainOrder(o))
	if err != nil {
		t.Fatalf("reference encoding: %v", err)
	}
	var got bytes.Buffer
	if err := json.Compact(&got, o.AppendJSON(nil)); err != nil {
		t.Fatalf("AppendJSON wrote invalid JSON: %v\n%s", err, o.AppendJSON(nil))
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("AppendJSON differs from encoding/json:\n got %s\nwant %s", got.Bytes(), want)
	}
}

// sampleOrder makes an order whose text fields, and metadata (written as PostgreSQL writes JSON: with
// spaces, and <, >, & and U+2028 unescaped), carry the given strings.
func sampleOrder(t testing.TB, number, status, externalID, label string, at time.Time) Order {
	t.Helper()
	var meta bytes.Buffer
	enc := json.NewEncoder(&meta)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"label": label, "ids": []string{externalID}}); err != nil {
		t.Fatal(err)
	}
	client, key := uuid.New(), uuid.New()
	cancelled := at.Add(time.Second)
	return Order{ID: uuid.New(), Number: number, Status: status, FulfillmentStatus: label, StoreID: uuid.New(), ClientID: &client,
		ExternalID: &externalID, Currency: "EUR", SubtotalCents: 3000, ShippingCents: -1, TaxCents: 1 << 40,
		TotalCents: 3001, AmountPaidCents: 0,
		Lines:    json.RawMessage(`[{"description" : "Fish & Chips <b>` + "\u2028\u2029" + `", "quantity" : 2, "metadata" : {"sku": "M"}}]`),
		Payments: json.RawMessage(`[]`), Metadata: bytes.TrimSpace(meta.Bytes()),
		Shipments: json.RawMessage(`[{"id" : "s", "carrier" : "UPS & <Co>", "tracking_number" : null}]`),
		Source:    Source{Kind: "integration", IntegrationKeyID: &key, Label: &label},
		CreatedAt: at, UpdatedAt: at.Add(time.Microsecond), CancelledAt: &cancelled}
}

func TestOrderJSONMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 22, 3, 47, 15, 566230000, time.UTC)
	checkOrderJSON(t, sampleOrder(t, "1001", "paid", "INV/2026/7", "Shop", at))
	checkOrderJSON(t, sampleOrder(t, "7", "invoiced", `quote " backslash \ <tag> & amp`, "tab\tnewline\n", at.Truncate(time.Second)))
	checkOrderJSON(t, sampleOrder(t, "8", "paid", "ünïcødé \u2028 line sep", "bad utf-8 \xff\xfe", at.Truncate(time.Minute)))
	// Absent values: no client, external id, key, label, cancellation; nil raw fields.
	checkOrderJSON(t, Order{ID: uuid.New(), Number: "1", Status: "pending", Source: Source{Kind: "manual"},
		CreatedAt: at, UpdatedAt: at})
}

func FuzzOrderJSON(f *testing.F) {
	f.Add("1001", "paid", "INV-1", "label", int64(1763783235566230000))
	f.Add("", "\x00", "\"<>&\\", "\u2028\xff", int64(0))
	f.Fuzz(func(t *testing.T, number, status, externalID, label string, nanos int64) {
		at := time.Unix(0, nanos).UTC()
		checkOrderJSON(t, sampleOrder(t, number, status, externalID, label, at))
	})
}

// A page is encoding/json's Page envelope around the orders, with or without a next cursor.
func TestOrderPageMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 22, 3, 47, 15, 566230000, time.UTC)
	orders := []Order{sampleOrder(t, "1", "paid", "a", "b", at), sampleOrder(t, "2", "paid", "c", "d", at)}
	for _, p := range []Page[Order]{{Rows: []Order{}}, {Rows: orders}, {Rows: orders, NextCursor: &models.Cursor{At: at, ID: orders[1].ID}}} {
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := json.Compact(&got, AppendOrderPage(nil, p)); err != nil {
			t.Fatalf("invalid page: %v", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("page differs from encoding/json:\n got %s\nwant %s", got.Bytes(), want)
		}
	}
}
