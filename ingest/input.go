package ingest

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"wds/models"
)

// The input types are the JSON contract of the Integration API's write bodies: the HTTP layer decodes
// straight into them and the store-native translator builds them in Go, so both reach the same rules.
// Pointer and nil fields mean "not sent", which matters for client upserts (only sent fields
// overwrite stored ones).

// Order is an order create request.
type Order struct {
	ExternalID    string         `json:"external_id"`
	Currency      string         `json:"currency"`
	Client        *Client        `json:"client"`
	Lines         []Line         `json:"lines"`
	ShippingCents int64          `json:"shipping_cents"`
	TaxCents      int64          `json:"tax_cents"`
	Metadata      map[string]any `json:"metadata"`
	Payment       *Payment       `json:"payment"`
}

// Line is one order line.
type Line struct {
	Description    string         `json:"description"`
	Quantity       int64          `json:"quantity"`
	UnitPriceCents int64          `json:"unit_price_cents"`
	Metadata       map[string]any `json:"metadata"`
}

// Client is the client object of an order and the body of POST /clients.
type Client struct {
	ExternalID     string   `json:"external_id"`
	Email          *string  `json:"email"`
	DisplayName    *string  `json:"display_name"`
	FirstName      *string  `json:"first_name"`
	LastName       *string  `json:"last_name"`
	Phone          *string  `json:"phone"`
	ClientType     *string  `json:"client_type"`
	Tags           []string `json:"tags"`
	BillingAddress *Address `json:"billing_address"`
}

// Address is a client's billing address.
type Address struct {
	AddressLine1 string `json:"address_line1"`
	City         string `json:"city"`
	State        string `json:"state"`
	PostalCode   string `json:"postal_code"`
	Country      string `json:"country"`
}

// Payment is an inline payment or the body of POST /orders/{id}/payments.
type Payment struct {
	ExternalID        string `json:"external_id"`
	AmountCents       int64  `json:"amount_cents"`
	Method            string `json:"method"`
	Provider          string `json:"provider"`
	ProviderPaymentID string `json:"provider_payment_id"`
	PaidAt            *Time  `json:"paid_at"`
}

// Refund is the optional body of POST /payments/{id}/refund.
type Refund struct {
	AmountCents *int64 `json:"amount_cents"`
}

// Time is an RFC 3339 date-time. It reports a malformed value as a JSON type error so the decoder
// can name the field (payment.paid_at) like every other wrongly typed field.
type Time struct{ time.Time }

// UnmarshalJSON accepts an RFC 3339 string with any fractional precision.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if v, err := time.Parse(time.RFC3339Nano, s); err == nil {
			t.Time = v
			return nil
		}
	}
	return &json.UnmarshalTypeError{Value: "not an RFC 3339 date-time", Type: reflect.TypeFor[Time]()}
}

// Enumerations the spec leaves open (decisions recorded in docs/integration-api.md).
var (
	paymentMethods = []string{"card", "bank_transfer", "cash", "check", "wallet", "other"}
	clientTypes    = []string{"retail", "wholesale"}
)

// Defaults for fields a caller may omit.
const (
	defaultMethod     = "other"
	defaultClientType = "retail"
	maxExternalIDLen  = 255
)

func invalid(path, format string, args ...any) error {
	return models.Fail(models.ErrValidation, "%s: %s", path, fmt.Sprintf(format, args...))
}

// normalize checks an order and fills defaults; storeCurrency is used when currency is absent. It
// returns the order's total.
func (o *Order) normalize(storeCurrency string) (totals, error) {
	if strings.TrimSpace(o.ExternalID) == "" {
		return totals{}, models.Fail(models.ErrExternalIDRequired, "external_id is required")
	}
	if len(o.ExternalID) > maxExternalIDLen {
		return totals{}, invalid("external_id", "must be at most %d characters", maxExternalIDLen)
	}
	if len(o.Lines) == 0 {
		return totals{}, models.Fail(models.ErrLinesRequired, "lines is required and must not be empty")
	}
	cur, err := normalizeCurrency(o.Currency, storeCurrency)
	if err != nil {
		return totals{}, err
	}
	o.Currency = cur
	t, err := computeTotals(o.Lines, o.ShippingCents, o.TaxCents)
	if err != nil {
		return totals{}, err
	}
	if o.Client != nil {
		if err := o.Client.normalize("client", false); err != nil {
			return totals{}, err
		}
	}
	if o.Payment != nil {
		if err := o.Payment.normalize("payment", false); err != nil {
			return totals{}, err
		}
	}
	return t, nil
}

func normalizeCurrency(cur, storeCurrency string) (string, error) {
	if cur == "" {
		return storeCurrency, nil
	}
	if len(cur) != 3 || strings.Trim(cur, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" {
		return "", invalid("currency", "must be three letters, e.g. USD")
	}
	return strings.ToUpper(cur), nil
}

// totals are an order's computed amounts.
type totals struct {
	subtotal, total int64
}

// computeTotals is total = sum(quantity * unit_price_cents) + shipping + tax (decisions.md §4), every
// step checked for int64 overflow so a hostile body cannot wrap a total negative.
func computeTotals(lines []Line, shipping, tax int64) (totals, error) {
	var sub int64
	for i, l := range lines {
		p := fmt.Sprintf("lines[%d]", i)
		if l.Quantity < 1 {
			return totals{}, invalid(p+".quantity", "must be an integer of at least 1")
		}
		if l.UnitPriceCents < 0 {
			return totals{}, invalid(p+".unit_price_cents", "must not be negative")
		}
		if l.UnitPriceCents > 0 && l.Quantity > math.MaxInt64/l.UnitPriceCents {
			return totals{}, invalid(p, "quantity times unit_price_cents overflows")
		}
		amount := l.Quantity * l.UnitPriceCents
		if sub > math.MaxInt64-amount {
			return totals{}, invalid("lines", "the sum of the lines overflows")
		}
		sub += amount
	}
	if shipping < 0 {
		return totals{}, invalid("shipping_cents", "must not be negative")
	}
	if tax < 0 {
		return totals{}, invalid("tax_cents", "must not be negative")
	}
	if sub > math.MaxInt64-shipping || sub+shipping > math.MaxInt64-tax {
		return totals{}, invalid("total_cents", "the order total overflows")
	}
	return totals{subtotal: sub, total: sub + shipping + tax}, nil
}

// normalize checks a payment; requireExternalID is true for POST /orders/{id}/payments, where
// external_id is the dedupe handle of a create.
func (p *Payment) normalize(path string, requireExternalID bool) error {
	if requireExternalID && strings.TrimSpace(p.ExternalID) == "" {
		return models.Fail(models.ErrExternalIDRequired, "%s is required", join(path, "external_id"))
	}
	if len(p.ExternalID) > maxExternalIDLen {
		return invalid(join(path, "external_id"), "must be at most %d characters", maxExternalIDLen)
	}
	if p.AmountCents <= 0 {
		return invalid(join(path, "amount_cents"), "must be an integer greater than 0")
	}
	if p.Method == "" {
		p.Method = defaultMethod
	}
	if !slices.Contains(paymentMethods, p.Method) {
		return invalid(join(path, "method"), "must be one of %s", strings.Join(paymentMethods, ", "))
	}
	return nil
}

// normalize checks a client; requireExternalID is true for POST /clients.
func (c *Client) normalize(path string, requireExternalID bool) error {
	if requireExternalID && strings.TrimSpace(c.ExternalID) == "" {
		return models.Fail(models.ErrExternalIDRequired, "%s is required", join(path, "external_id"))
	}
	if len(c.ExternalID) > maxExternalIDLen {
		return invalid(join(path, "external_id"), "must be at most %d characters", maxExternalIDLen)
	}
	if c.Email != nil {
		e := strings.TrimSpace(*c.Email)
		if e != "" && !strings.Contains(e, "@") {
			return invalid(join(path, "email"), "must be an email address")
		}
		c.Email = &e
	}
	if c.ClientType != nil && !slices.Contains(clientTypes, *c.ClientType) {
		return invalid(join(path, "client_type"), "must be one of %s", strings.Join(clientTypes, ", "))
	}
	return nil
}

// ContainsNUL reports whether JSON text escapes U+0000 inside a string. PostgreSQL's text and jsonb
// cannot store that character, so such a body is refused as invalid rather than failing at insert.
// (A raw NUL byte is not valid JSON and never gets this far.)
func ContainsNUL(raw []byte) bool {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] == 'u' && i+6 <= len(raw) && string(raw[i+2:i+6]) == "0000" {
			return true
		}
		i++ // skip the escaped character, so an escaped backslash before "u0000" is not a NUL
	}
	return false
}

// Storable reports whether s can be stored in a PostgreSQL text column: valid UTF-8 without NUL.
// Strings decoded from JSON always are valid UTF-8; headers and paths need the check.
func Storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// join builds a field path; the top-level body has the empty path.
func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}
