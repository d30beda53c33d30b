package ingest

import (
	"errors"
	"math"
	"testing"

	"wds/internal/order"
	"wds/internal/platform/problem"
)

func TestInitialStatus(t *testing.T) {
	cases := []struct {
		total   int64
		payment *Payment
		want    string
		err     error
	}{
		{1000, &Payment{AmountCents: 1000}, order.Paid, nil},
		{1000, &Payment{AmountCents: 1}, order.PartiallyPaid, nil},
		{1000, nil, order.Invoiced, nil},
		{0, nil, order.Paid, nil},
		{1000, &Payment{AmountCents: 1001}, "", ErrAmountExceedsBalance},
		{0, &Payment{AmountCents: 1}, "", ErrAmountExceedsBalance},
	}
	for _, tc := range cases {
		got, err := initialStatus(tc.total, tc.payment)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("initialStatus(%d, %+v) = %q, %v; want %q, %v", tc.total, tc.payment, got, err, tc.want, tc.err)
		}
	}
}

func TestComputeTotals(t *testing.T) {
	got, err := computeTotals([]Line{{Quantity: 2, UnitPriceCents: 1000}, {Quantity: 1, UnitPriceCents: 500}}, 150, 50)
	if err != nil || got.subtotal != 2500 || got.total != 2700 {
		t.Fatalf("got %+v, %v", got, err)
	}
	overflows := [][]Line{
		{{Quantity: math.MaxInt64, UnitPriceCents: 2}},
		{{Quantity: 1, UnitPriceCents: math.MaxInt64}, {Quantity: 1, UnitPriceCents: 1}},
	}
	for _, lines := range overflows {
		if _, err := computeTotals(lines, 0, 0); !errors.Is(err, problem.Invalid) {
			t.Errorf("%+v: %v, want a validation error", lines, err)
		}
	}
	if _, err := computeTotals([]Line{{Quantity: 1, UnitPriceCents: math.MaxInt64 - 1}}, 1, 1); !errors.Is(err, problem.Invalid) {
		t.Errorf("shipping and tax overflow: %v", err)
	}
}

func TestNormalizeCurrency(t *testing.T) {
	for in, want := range map[string]string{"usd": "USD", "JpY": "JPY", "": "EUR"} {
		if got, err := normalizeCurrency(in, "EUR"); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"US", "USDD", "U$D", "ÜSD", "12 "} {
		if _, err := normalizeCurrency(bad, "EUR"); !errors.Is(err, problem.Invalid) {
			t.Errorf("%q accepted", bad)
		}
	}
}
