package money_test

import (
	"math"
	"testing"

	"wds/internal/money"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		minor    int64
		currency string
		want     string
	}{
		{123456, "USD", "1,234.56 USD"},
		{5, "USD", "0.05 USD"},
		{0, "EUR", "0.00 EUR"},
		{100, "eur", "1.00 EUR"},
		{123456, "JPY", "123,456 JPY"},
		{0, "JPY", "0 JPY"},
		{1234567, "KWD", "1,234.567 KWD"},
		{7, "KWD", "0.007 KWD"},
		{12345, "CLF", "1.2345 CLF"},
		{-250, "USD", "-2.50 USD"},
		{-1000000, "JPY", "-1,000,000 JPY"},
		{100000, "GBP", "1,000.00 GBP"},
		{math.MaxInt64, "USD", "92,233,720,368,547,758.07 USD"},
		{math.MinInt64, "JPY", "-9,223,372,036,854,775,808 JPY"},
	} {
		if got := money.Format(tc.minor, tc.currency); got != tc.want {
			t.Errorf("Format(%d, %q) = %q, want %q", tc.minor, tc.currency, got, tc.want)
		}
	}
}

func TestExponent(t *testing.T) {
	for cur, want := range map[string]int{"USD": 2, "JPY": 0, "KWD": 3, "CLF": 4, "XYZ": 2} {
		if got := money.Exponent(cur); got != want {
			t.Errorf("Exponent(%q) = %d, want %d", cur, got, want)
		}
	}
}
