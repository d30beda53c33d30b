package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"wds/internal/platform/answer"
	"wds/internal/platform/problem"
	"wds/models"
)

// The input types are the JSON contract of the Integration API's write bodies: the HTTP layer decodes
// straight into them and the store-native translator builds them in Go, so both reach the same rules.
// Pointer and nil fields mean "not sent", which matters for client upserts (only sent fields
// overwrite stored ones).

// Order is an order create request.
type Order struct {
	ExternalID    string   `json:"external_id"`
	Currency      string   `json:"currency"`
	Client        *Client  `json:"client"`
	Lines         []Line   `json:"lines"`
	ShippingCents int64    `json:"shipping_cents"`
	TaxCents      int64    `json:"tax_cents"`
	Metadata      Metadata `json:"metadata"`
	Payment       *Payment `json:"payment"`
}

// Line is one order line.
type Line struct {
	Description    string   `json:"description"`
	Quantity       int64    `json:"quantity"`
	UnitPriceCents int64    `json:"unit_price_cents"`
	Metadata       Metadata `json:"metadata"`
}

// Metadata is a free-form JSON object (an order's or a line's). Its numbers are kept as the caller
// wrote them (json.Number), never rounded through float64: an id such as 9007199254740993 (above
// 2^53) or 12345678901234567890 must come back digit for digit from the Read API and in events.
// Decoding it here, rather than with a decoder option at each caller, holds for every path a body
// takes: the Integration API, the Operator API's app orders (AppOrder decodes itself) and the CLI.
type Metadata map[string]any

// UnmarshalJSON decodes the object with json.Number numbers. A value that is not an object is a
// *json.UnmarshalTypeError, so the caller's decoder names the field (lines[0].metadata).
func (m *Metadata) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return err
	}
	*m = v
	return nil
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

	// clearAddress removes the stored billing address (an operator's PATCH with billing_address
	// null); the Integration API has no way to ask for that.
	clearAddress bool
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

// AppOrder is the body of POST /admin/v1/orgs/{org_id}/orders: an order create plus the store it
// is for. An operator's order may have no external_id.
type AppOrder struct {
	StoreID *string `json:"store_id"`
	Order
}

// UnmarshalJSON reads store_id and the order from one object. (Decoded as an embedded struct, a
// wrongly typed field's path would carry the struct's name: Order.lines.quantity.)
func (a *AppOrder) UnmarshalJSON(b []byte) error { return decodeWithStore(b, &a.StoreID, &a.Order) }

// decodeWithStore decodes a body that is rest plus a store_id.
func decodeWithStore(b []byte, storeID **string, rest any) error {
	var s struct {
		StoreID *string `json:"store_id"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*storeID = s.StoreID
	return json.Unmarshal(b, rest)
}

// ClientFields are a client's fields as an operator sends them, to create a client or to edit one
// (only the fields present change; null clears).
type ClientFields struct {
	Email          models.Optional[string]   `json:"email"`
	DisplayName    models.Optional[string]   `json:"display_name"`
	FirstName      models.Optional[string]   `json:"first_name"`
	LastName       models.Optional[string]   `json:"last_name"`
	Phone          models.Optional[string]   `json:"phone"`
	ClientType     models.Optional[string]   `json:"client_type"`
	Tags           models.Optional[[]string] `json:"tags"`
	BillingAddress models.Optional[Address]  `json:"billing_address"`
}

// NewClient is the body of POST /admin/v1/orgs/{org_id}/clients.
type NewClient struct {
	StoreID *string `json:"store_id"`
	ClientFields
}

// UnmarshalJSON reads store_id and the fields from one object, as AppOrder does.
func (n *NewClient) UnmarshalJSON(b []byte) error {
	return decodeWithStore(b, &n.StoreID, &n.ClientFields)
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

// ClientTypes are the values client_type takes, for forms that offer them.
func ClientTypes() []string { return slices.Clone(clientTypes) }

// Defaults for fields a caller may omit.
const (
	defaultMethod     = "other"
	defaultClientType = "retail"
	maxExternalIDLen  = 255
)

func invalid(path, format string, args ...any) error {
	return problem.Fail(problem.Invalid, "%s: %s", path, fmt.Sprintf(format, args...))
}

// normalize checks an order and fills defaults; storeCurrency is used when currency is absent, and
// requireExternalID is true for integration orders (an app order may have none). It returns the
// order's total.
func (o *Order) normalize(storeCurrency string, requireExternalID bool) (totals, error) {
	if requireExternalID && strings.TrimSpace(o.ExternalID) == "" {
		return totals{}, problem.Fail(ErrExternalIDRequired, "external_id is required")
	}
	if len(o.ExternalID) > maxExternalIDLen {
		return totals{}, invalid("external_id", "must be at most %d characters", maxExternalIDLen)
	}
	if len(o.Lines) == 0 {
		return totals{}, problem.Fail(ErrLinesRequired, "lines is required and must not be empty")
	}
	if len(o.Lines) > MaxLines {
		return totals{}, invalid("lines", "at most %d", MaxLines)
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

// computeTotals is total = sum(quantity * unit_price_cents) + shipping + tax (docs/integration-api.md), every
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
		return problem.Fail(ErrExternalIDRequired, "%s is required", join(path, "external_id"))
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
		return problem.Fail(ErrExternalIDRequired, "%s is required", join(path, "external_id"))
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
	if len(c.Tags) > MaxTags {
		return invalid(join(path, "tags"), "at most %d", MaxTags)
	}
	return nil
}

// Limits of the client fields an operator writes (the Integration API keeps accepting the lengths it
// always did). Lengths count characters.
const (
	maxEmailLen = 320 // RFC 3696's longest address
	maxNameLen  = 200 // names, display name, phone, each address field
	maxTagLen   = 100
)

// Limits of every write, whoever makes it: what one order or client may hold, so that no row of one
// tenant's makes every page of orders or clients enormous in the process all tenants share
// (docs/integration-api.md).
const (
	MaxLines = 500
	MaxTags  = 100
)

// checkLimits refuses an over-long field of a client an operator writes, naming it.
func (c *Client) checkLimits(path string) error {
	if c.Email != nil && utf8.RuneCountInString(*c.Email) > maxEmailLen {
		return invalid(join(path, "email"), "must be at most %d characters", maxEmailLen)
	}
	type text struct {
		field string
		v     *string
	}
	texts := []text{{"display_name", c.DisplayName}, {"first_name", c.FirstName}, {"last_name", c.LastName}, {"phone", c.Phone}}
	if a := c.BillingAddress; a != nil {
		texts = append(texts, text{"billing_address.address_line1", &a.AddressLine1}, text{"billing_address.city", &a.City},
			text{"billing_address.state", &a.State}, text{"billing_address.postal_code", &a.PostalCode},
			text{"billing_address.country", &a.Country})
	}
	for _, t := range texts {
		if t.v != nil && utf8.RuneCountInString(*t.v) > maxNameLen {
			return invalid(join(path, t.field), "must be at most %d characters", maxNameLen)
		}
	}
	for i, tag := range c.Tags {
		if utf8.RuneCountInString(tag) > maxTagLen {
			return invalid(fmt.Sprintf("%s[%d]", join(path, "tags"), i), "must be at most %d characters", maxTagLen)
		}
	}
	return nil
}

// client turns an operator's fields into the Integration API's client input, whose pointers mean
// "sent", so one set of rules (normalize, and clientState.apply when stored) serves both. null
// clears: an empty email is no email, empty text is "", no tags is [], client_type goes back to
// its default, and the billing address is removed. The result is checked and normalized.
func (f ClientFields) client() (Client, error) {
	var c Client
	text := func(o models.Optional[string]) *string {
		if !o.Set {
			return nil
		}
		v := o.Value // "" when null
		return &v
	}
	c.Email, c.DisplayName, c.FirstName = text(f.Email), text(f.DisplayName), text(f.FirstName)
	c.LastName, c.Phone, c.ClientType = text(f.LastName), text(f.Phone), text(f.ClientType)
	if f.ClientType.Null {
		def := defaultClientType
		c.ClientType = &def
	}
	if f.Tags.Set {
		c.Tags = f.Tags.Value
		if c.Tags == nil {
			c.Tags = []string{}
		}
	}
	if f.BillingAddress.Set && !f.BillingAddress.Null {
		a := f.BillingAddress.Value
		c.BillingAddress = &a
	}
	c.clearAddress = f.BillingAddress.Null
	if err := c.checkLimits(""); err != nil {
		return Client{}, err
	}
	return c, c.normalize("", false)
}

// names lists the fields the operator sent, for the audit log (names only: values are personal data).
func (f ClientFields) names() []string {
	var out []string
	for _, s := range []struct {
		name string
		set  bool
	}{{"email", f.Email.Set}, {"display_name", f.DisplayName.Set}, {"first_name", f.FirstName.Set},
		{"last_name", f.LastName.Set}, {"phone", f.Phone.Set}, {"client_type", f.ClientType.Set},
		{"tags", f.Tags.Set}, {"billing_address", f.BillingAddress.Set}} {
		if s.set {
			out = append(out, s.name)
		}
	}
	return out
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

// Decode decodes a JSON object body into dst (docs/integration-api.md), as the APIs read every
// request's body and `wds admin` its body files: a body that is not JSON or not an object is
// invalid_json; a known field of the wrong type is validation_failed naming the field (a line by its
// index); unknown fields are ignored.
func Decode(raw []byte, dst any) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return problem.Fail(answer.ErrInvalidJSON, "the body must be a JSON object")
	}
	err := json.Unmarshal(trimmed, dst)
	if err == nil {
		if ContainsNUL(trimmed) {
			return problem.Fail(problem.Invalid, "strings must not contain the NUL character (\\u0000)")
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return problem.Fail(problem.Invalid, "%s: must be %s", fieldPath(trimmed, te.Field), describe(te.Type))
	}
	return problem.Fail(answer.ErrInvalidJSON, "the body is not valid JSON: %v", err)
}

// DecodeOrder decodes an order create body.
func DecodeOrder(raw []byte) (Order, error) {
	var o Order
	return o, Decode(raw, &o)
}

// DecodeOptional is Decode where an empty body means {} (refunds need no body).
func DecodeOptional(raw []byte, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return Decode(raw, dst)
}

// fieldPath adds the array index json leaves out of a type error's path: "lines.quantity" becomes
// "lines[2].quantity" by finding the first line that fails to decode on its own. Lines are the only
// array of objects in the Integration API's bodies.
func fieldPath(body []byte, field string) string {
	rest, ok := strings.CutPrefix(field, "lines.")
	if !ok {
		return field
	}
	var probe struct {
		Lines []json.RawMessage `json:"lines"`
	}
	if json.Unmarshal(body, &probe) != nil {
		return field
	}
	for i, l := range probe.Lines {
		var line Line
		if json.Unmarshal(l, &line) != nil {
			return fmt.Sprintf("lines[%d].%s", i, rest)
		}
	}
	return field
}

// describe names a Go type the way an integrator reads the JSON.
func describe(t reflect.Type) string {
	if t == nil {
		return "of another type"
	}
	if t == reflect.TypeFor[Time]() {
		return "an RFC 3339 date-time"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer within 64 bits"
	case reflect.Bool:
		return "true or false"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "of another type"
	}
}
