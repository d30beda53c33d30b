package nativestore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wds/internal/ingest"
	"wds/internal/platform/problem"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFixtures translates every fixture: one per status of the mapping table, several currencies
// (zero- and three-decimal ones too), several lines, numbers as the platform sends them.
func TestFixtures(t *testing.T) {
	cases := []struct {
		file        string
		action      ingest.StoreAction
		currency    string
		lines       [][2]int64 // quantity, unit minor units
		shipping    int64
		tax         int64
		payment     int64 // 0: none
		clientExt   string
		clientEmail string
	}{
		{"pending_usd.json", ingest.StoreCreate, "USD", [][2]int64{{2, 300}, {1, 1250}}, 1000, 135, 2985, "", "jane.doe@example.com"},
		{"on_hold_eur.json", ingest.StoreCreate, "EUR", [][2]int64{{1, 1000}}, 490, 286, 1776, "12", "jane.doe@example.com"},
		{"failed_gbp.json", ingest.StoreCreate, "GBP", [][2]int64{{1, 1800}}, 0, 360, 2160, "", "jane.doe@example.com"},
		{"processing_jpy.json", ingest.StorePay, "JPY", [][2]int64{{2, 1500}, {1, 1800}}, 700, 600, 6100, "44", "jane.doe@example.com"},
		{"completed_kwd.json", ingest.StorePay, "KWD", [][2]int64{{1, 12750}, {2, 250}}, 1250, 0, 14500, "", "jane.doe@example.com"},
		{"cancelled_usd.json", ingest.StoreCancel, "USD", [][2]int64{{1, 2500}}, 500, 0, 3000, "", "jane.doe@example.com"},
		{"refunded_usd.json", ingest.StoreRefund, "USD", [][2]int64{{1, 1500}, {3, 199}}, 0, 168, 2265, "12", "jane.doe@example.com"},
		{"processing_fee_usd.json", ingest.StorePay, "USD", [][2]int64{{1, 2000}, {1, 150}}, 300, 0, 2450, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			so, err := Parse(fixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			o := so.Order
			if so.Action != tc.action || o.Currency != tc.currency || o.ShippingCents != tc.shipping || o.TaxCents != tc.tax {
				t.Fatalf("got action %d %s shipping %d tax %d", so.Action, o.Currency, o.ShippingCents, o.TaxCents)
			}
			if len(o.Lines) != len(tc.lines) {
				t.Fatalf("%d lines, want %d", len(o.Lines), len(tc.lines))
			}
			for i, l := range o.Lines {
				if l.Quantity != tc.lines[i][0] || l.UnitPriceCents != tc.lines[i][1] {
					t.Errorf("line %d: %d × %d, want %v", i, l.Quantity, l.UnitPriceCents, tc.lines[i])
				}
			}
			if so.Payment == nil || so.Payment.AmountCents != tc.payment || so.Payment.ExternalID != o.ExternalID {
				t.Fatalf("payment %+v, want %d", so.Payment, tc.payment)
			}
			if tc.clientEmail == "" {
				if o.Client != nil {
					t.Fatalf("guest order without email got client %+v", o.Client)
				}
				return
			}
			if o.Client == nil || o.Client.ExternalID != tc.clientExt || *o.Client.Email != tc.clientEmail ||
				o.Client.BillingAddress.PostalCode != "94103" || *o.Client.DisplayName != "Jane Doe" {
				t.Fatalf("client %+v", o.Client)
			}
		})
	}
}

func TestUnevenLineKeepsTheChargedTotal(t *testing.T) {
	so, err := Parse(fixture(t, "on_hold_eur.json"))
	if err != nil {
		t.Fatal(err)
	}
	l := so.Order.Lines[0]
	if l.Quantity != 1 || l.UnitPriceCents != 1000 || l.Metadata["quantity"] != int64(3) || !strings.Contains(l.Description, "× 3") {
		t.Fatalf("line %+v", l)
	}
}

func TestPaymentDetails(t *testing.T) {
	so, err := Parse(fixture(t, "refunded_usd.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := so.Payment
	if p.Method != "card" || p.Provider != "stripe" || p.ProviderPaymentID != "ch_3Nrefund" ||
		p.PaidAt == nil || p.PaidAt.UTC().Format("2006-01-02T15:04:05") != "2026-11-20T09:16:02" {
		t.Fatalf("payment %+v", p)
	}
}

func TestPingsAreNotOrders(t *testing.T) {
	for _, body := range []string{string(fixture(t, "ping.txt")), "", "[]", `{"webhook_id":3}`, `{"id":null}`, "{not json"} {
		if _, err := Parse([]byte(body)); !errors.Is(err, ErrNotAnOrder) {
			t.Errorf("%q: %v, want ErrNotAnOrder", body, err)
		}
	}
}

func TestRejections(t *testing.T) {
	cases := []struct{ body, field string }{
		{`{"id":1,"status":"draft","currency":"USD"}`, "status"},
		{`{"id":1,"status":"pending","currency":"US"}`, "currency"},
		{`{"id":1,"status":"pending","currency":"USD","total":"1.005"}`, "total"},
		{`{"id":1,"status":"pending","currency":"USD","total":"-1.00"}`, "total"},
		{`{"id":1,"status":"pending","currency":"USD","total":"5.00"}`, "total"},
		{`{"id":1,"status":"pending","currency":"JPY","total":"10.5"}`, "total"},
		{`{"id":1,"status":"pending","currency":"USD","line_items":[{"quantity":1,"total":"1.00"},{"quantity":0,"total":"1"}]}`, "line_items[1].quantity"},
		{`{"id":1,"status":"pending","currency":"USD","line_items":[{"quantity":1,"total":"abc"}]}`, "line_items[0].total"},
		{`{"id":1,"status":"pending","currency":"USD","line_items":[{"quantity":1,"total":true}]}`, "line_items.total"},
		{`{"id":1,"status":"pending","currency":"USD","line_items":"none"}`, "line_items"},
		{`{"id":1.5,"status":"pending","currency":"USD"}`, "id"},
		{`{"id":1,"status":"processing","currency":"USD","total":"1.00","line_items":[{"quantity":1,"total":"1.00"}],"date_paid_gmt":"soon"}`, "date_paid_gmt"},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.body))
		if !errors.Is(err, problem.Invalid) || !strings.HasPrefix(problem.Detail(err), tc.field+":") {
			t.Errorf("%s: %v, want a validation error on %s", tc.body, err, tc.field)
		}
	}
}

func TestToMinor(t *testing.T) {
	cases := []struct {
		amount, currency string
		round            bool
		want             int64
		ok               bool
	}{
		{"12.50", "USD", false, 1250, true},
		{"12.5", "USD", false, 1250, true},
		{"12", "USD", false, 1200, true},
		{"0.10", "EUR", false, 10, true},
		{"0.1", "EUR", false, 10, true},
		{"1.005", "USD", false, 0, false},
		{"1.005", "USD", true, 101, true},
		{"3.3333333333333335", "EUR", true, 333, true},
		{"1500", "JPY", false, 1500, true},
		{"1500.0", "JPY", false, 1500, true},
		{"1500.5", "JPY", false, 0, false},
		{"12.750", "KWD", false, 12750, true},
		{"0.001", "BHD", false, 1, true},
		{"1e2", "USD", false, 10000, true},
		{"-1", "USD", false, 0, false},
		{"abc", "USD", false, 0, false},
		{"", "USD", false, 0, false},
		{"1e999999999", "USD", false, 0, false},
		{"99999999999999999999", "USD", false, 0, false},
		// 0.1 + 0.2 is exact here, unlike in floating point.
		{"0.30", "USD", false, 30, true},
	}
	for _, tc := range cases {
		got, err := ToMinor(tc.amount, tc.currency, tc.round)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ToMinor(%q, %s, %v) = %d, %v; want %d ok=%v", tc.amount, tc.currency, tc.round, got, err, tc.want, tc.ok)
		}
	}
}

// FuzzToMinor: no panic, never a negative or out-of-bound amount, and exact round trips.
func FuzzToMinor(f *testing.F) {
	for _, s := range []string{"12.50", "0", "1e5", "-0", "1.005", "99999999999999999.99", "1e-30", ".5", "5."} {
		f.Add(s, "USD", false)
		f.Add(s, "JPY", true)
		f.Add(s, "KWD", false)
	}
	f.Fuzz(func(t *testing.T, amount, currency string, round bool) {
		v, err := ToMinor(amount, currency, round)
		if err != nil {
			return
		}
		if v < 0 || v >= maxMinor.IntPart() {
			t.Fatalf("ToMinor(%q) = %d out of bounds", amount, v)
		}
	})
}

// FuzzParse: any body gives an order, ErrNotAnOrder or a validation error; never a panic or another error.
func FuzzParse(f *testing.F) {
	entries, _ := os.ReadDir("testdata")
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("testdata", e.Name())); err == nil && !e.IsDir() {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"id":1,"status":"processing","currency":"USD","total":"1e3","line_items":[{"quantity":9223372036854775807,"price":1e30}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		so, err := Parse(body)
		if err != nil {
			if !errors.Is(err, ErrNotAnOrder) && !errors.Is(err, problem.Invalid) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		var sum int64
		for _, l := range so.Order.Lines {
			if l.Quantity < 1 || l.UnitPriceCents < 0 {
				t.Fatalf("bad line %+v", l)
			}
			sum += l.Quantity * l.UnitPriceCents
		}
		if so.Payment != nil && so.Payment.AmountCents != sum+so.Order.ShippingCents+so.Order.TaxCents {
			t.Fatalf("payment %d does not equal the order total", so.Payment.AmountCents)
		}
	})
}
