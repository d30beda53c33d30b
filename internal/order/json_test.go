package order

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/platform/paging"
)

// plainOrder is Order without its methods: what encoding/json writes from the struct's tags, the
// reference AppendJSON must match.
type plainOrder Order

// checkOrderJSON fails unless AppendJSON is byte for byte what encoding/json writes, nested values
// compact as the rest.
func checkOrderJSON(t *testing.T, o Order) {
	t.Helper()
	want, err := json.Marshal(plainOrder(o))
	if err != nil {
		t.Fatalf("reference encoding: %v", err)
	}
	if got := o.AppendJSON(nil); !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON differs from encoding/json:\n got %s\nwant %s", got, want)
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
		Lines: json.RawMessage(`[{"description" : "Fish & Chips <b>` + "\u2028\u2029" + `", "quantity" : 2, "metadata" : {"sku": "M"}}, ` +
			"\n {\"description\" : \"a \\\" quoted , : { spaced \\\\\", \"quantity\" :\t1, \"metadata\" : {\"a\\\\\": [1, 2.5e3, true, null]}}]"),
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
	for _, p := range []paging.Page[Order]{{Rows: []Order{}}, {Rows: orders}, {Rows: orders, NextCursor: &paging.Cursor{At: at, ID: orders[1].ID}}} {
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := json.Compact(&got, AppendPage(nil, p)); err != nil {
			t.Fatalf("invalid page: %v", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("page differs from encoding/json:\n got %s\nwant %s", got.Bytes(), want)
		}
	}
}

// TestRandomOrdersEncodeAsEncodingJSON fills every field of Order (found through its shape, so a new
// field is covered too) with random values, absent ones included, and holds AppendJSON to
// encoding/json on each.
func TestRandomOrdersEncodeAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var o Order
		v := reflect.ValueOf(&o).Elem()
		for _, l := range orderShape.leaves {
			f := v.FieldByIndex(l.index)
			f.Set(reflect.ValueOf(randomValue(t, r, f.Type())))
		}
		checkOrderJSON(t, o)
	}
}

// randomValue is a random value of a type a view's field holds; a pointer is nil one time in four.
func randomValue(t *testing.T, r *rand.Rand, typ reflect.Type) any {
	if typ.Kind() == reflect.Pointer {
		p := reflect.New(typ.Elem())
		if r.IntN(4) == 0 {
			return reflect.Zero(typ).Interface()
		}
		p.Elem().Set(reflect.ValueOf(randomValue(t, r, typ.Elem())))
		return p.Interface()
	}
	switch typ {
	case reflect.TypeFor[uuid.UUID]():
		var id uuid.UUID
		for i := range id {
			id[i] = byte(r.Uint32())
		}
		return id
	case reflect.TypeFor[string]():
		return randomString(r)
	case reflect.TypeFor[int64]():
		return []int64{0, -1, 1 << 62, -1 << 63, r.Int64(), r.Int64N(100000)}[r.IntN(6)]
	case reflect.TypeFor[json.RawMessage]():
		if r.IntN(5) == 0 {
			return json.RawMessage(nil)
		}
		return randomJSON(t, r)
	case reflect.TypeFor[time.Time]():
		at := time.Unix(r.Int64N(7e9), r.Int64N(1e9)*int64(r.IntN(2))) // whole seconds half the time
		return at.In(time.FixedZone("z", (r.IntN(48)-24)*1800))
	}
	t.Fatalf("no random %v", typ)
	return nil
}

// randomString mixes plain text with what encoding/json escapes: quotes, controls, HTML characters,
// U+2028/U+2029, other multi-byte runes and invalid UTF-8.
func randomString(r *rand.Rand) string {
	pieces := []string{"a", "Shop 7", `"`, `\`, "<", ">", "&", "\n", "\t", "\x00", "\x1f", "\u2028", "\u2029", "ü", "€", "😀", "\xff", "\xe2\x80", "/", "'"}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// randomJSON is a random JSON object as PostgreSQL writes one: HTML characters and U+2028 unescaped,
// and, half the time, spaces around its separators.
func randomJSON(t *testing.T, r *rand.Rand) json.RawMessage {
	m := map[string]any{}
	for range r.IntN(4) {
		m[randomString(r)] = []any{randomString(r), r.Float64(), nil, true, map[string]any{"k": randomString(r)}}[r.IntN(5)]
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	out := bytes.TrimSpace(buf.Bytes())
	if r.IntN(2) == 0 {
		var spaced bytes.Buffer
		if err := json.Indent(&spaced, out, "", " "); err != nil {
			t.Fatal(err)
		}
		out = spaced.Bytes()
	}
	return out
}
