// Package money is how amounts are counted and shown: integer minor units of an ISO 4217
// currency, whose exponent says how many decimals a major unit has (USD cents, JPY whole yen).
package money

import (
	"strconv"
	"strings"
)

// minorUnits is the ISO 4217 exponent of currencies whose minor unit is not the cent. Every other
// currency has two decimals.
var minorUnits = map[string]int{
	// zero-decimal
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	// three-decimal
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	// four-decimal
	"CLF": 4, "UYW": 4,
}

// Exponent is the number of decimals of currency's minor unit.
func Exponent(currency string) int {
	if e, ok := minorUnits[strings.ToUpper(currency)]; ok {
		return e
	}
	return 2
}

// Format shows minor units of currency as a person reads them: the major units grouped by
// thousands, the currency's own decimals and its code, so 123456 USD is "1,234.56 USD" and
// 123456 JPY is "123,456 JPY".
func Format(minor int64, currency string) string {
	sign := ""
	// Work on the digits as text so the most negative int64 needs no special case.
	digits := strconv.FormatInt(minor, 10)
	if strings.HasPrefix(digits, "-") {
		sign, digits = "-", digits[1:]
	}
	exp := Exponent(currency)
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-exp], digits[len(digits)-exp:]
	var b strings.Builder
	b.WriteString(sign)
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	if currency != "" {
		b.WriteString(" " + strings.ToUpper(currency))
	}
	return b.String()
}
