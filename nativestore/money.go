package nativestore

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// minorUnits is the ISO 4217 exponent of currencies whose minor unit is not the cent. Every other
// currency has two decimals.
var minorUnits = map[string]int32{
	// zero-decimal
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	// three-decimal
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	// four-decimal
	"CLF": 4, "UYW": 4,
}

// Exponent is the number of decimals of currency's minor unit.
func Exponent(currency string) int32 {
	if e, ok := minorUnits[currency]; ok {
		return e
	}
	return 2
}

// maxExponent bounds the decimal exponent accepted from outside.
const maxExponent = 30

// maxMinor bounds converted amounts so they fit PostgreSQL's bigint with room for sums.
var maxMinor = decimal.New(1, 18)

// ToMinor converts a decimal amount such as "12.50" to integer minor units of currency (1250 for USD,
// 12 for "12" JPY, 12500 for "12.5" KWD) with exact decimal arithmetic. An amount with more precision
// than the currency has, a negative amount or a huge one is an error unless round is set, which
// rounds half away from zero (for the platform's computed unit prices, never for totals).
func ToMinor(amount, currency string, round bool) (int64, error) {
	d, err := decimal.NewFromString(amount)
	if err != nil {
		return 0, fmt.Errorf("%q is not a decimal number", amount)
	}
	// A wild exponent ("1e999999999") would make the comparison below build an enormous integer.
	if d.Exponent() < -maxExponent || d.Exponent() > maxExponent {
		return 0, fmt.Errorf("%q is out of range", amount)
	}
	if d.IsNegative() {
		return 0, fmt.Errorf("%q is negative", amount)
	}
	exp := Exponent(currency)
	minor := d.Shift(exp)
	if !minor.IsInteger() {
		if !round {
			return 0, fmt.Errorf("%q has more than %d decimals for %s", amount, exp, currency)
		}
		minor = minor.Round(0)
	}
	if minor.GreaterThanOrEqual(maxMinor) {
		return 0, fmt.Errorf("%q is too large", amount)
	}
	return minor.IntPart(), nil
}
