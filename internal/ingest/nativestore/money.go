package nativestore

import (
	"fmt"

	"github.com/shopspring/decimal"

	iso4217 "wds/internal/money"
)

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
	exp := int32(iso4217.Exponent(currency))
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
