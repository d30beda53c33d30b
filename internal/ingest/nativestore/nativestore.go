// Package nativestore translates the store platform's own order resource (a WooCommerce-style order as
// its order webhooks send it, docs/integration-api.md, store-native receiver) into the ingest package's store order: the generic
// order, its payment, and the action its status maps to. Money arrives as decimal strings (and line
// prices as JSON numbers); it is converted to the currency's minor units with exact decimal
// arithmetic, never through floating point.
package nativestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"wds/internal/ingest"
	"wds/internal/platform/problem"
)

// ErrNotAnOrder reports a payload that is not an order, such as the platform's ping
// (`webhook_id=...` as a form body) sent when a webhook is saved. The receiver acknowledges it.
var ErrNotAnOrder = errors.New("nativestore: payload is not an order")

// order is the part of the platform's order resource the translation reads; other fields are ignored.
type order struct {
	ID            platformID `json:"id"`
	Number        string     `json:"number"`
	Status        string     `json:"status"`
	Currency      string     `json:"currency"`
	Total         money      `json:"total"`
	ShippingTotal money      `json:"shipping_total"`
	TotalTax      money      `json:"total_tax"`
	CustomerID    int64      `json:"customer_id"`
	Billing       billing    `json:"billing"`
	LineItems     []line     `json:"line_items"`
	FeeLines      []fee      `json:"fee_lines"`
	PaymentMethod string     `json:"payment_method"`
	TransactionID string     `json:"transaction_id"`
	DatePaidGMT   *string    `json:"date_paid_gmt"`
}

type billing struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Company   string `json:"company"`
	Address1  string `json:"address_1"`
	City      string `json:"city"`
	State     string `json:"state"`
	Postcode  string `json:"postcode"`
	Country   string `json:"country"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
}

type line struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	ProductID   int64  `json:"product_id"`
	VariationID int64  `json:"variation_id"`
	Quantity    int64  `json:"quantity"`
	Total       money  `json:"total"`
	Price       money  `json:"price"`
	SKU         string `json:"sku"`
}

type fee struct {
	Name  string `json:"name"`
	Total money  `json:"total"`
}

// money is a decimal amount as the platform sends it: a JSON string ("12.50") or, for line prices, a
// JSON number (12.5). It keeps the literal text so no float ever holds it.
type money string

func (m *money) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*m = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*m = money(strings.TrimSpace(s))
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		*m = money(b)
	default:
		return &json.UnmarshalTypeError{Value: "not a decimal amount", Type: reflect.TypeFor[money]()}
	}
	return nil
}

// platformID is the order id: a JSON integer, or a string from middleware that re-encodes it.
type platformID string

func (p *platformID) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		if _, err := strconv.ParseUint(string(n), 10, 64); err == nil {
			*p = platformID(n)
			return nil
		}
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil && strings.TrimSpace(s) != "" {
		*p = platformID(strings.TrimSpace(s))
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	return &json.UnmarshalTypeError{Value: "not an order id", Type: reflect.TypeFor[platformID]()}
}

// actions is the store-native status mapping table.
var actions = map[string]ingest.StoreAction{
	"pending":    ingest.StoreCreate,
	"on-hold":    ingest.StoreCreate,
	"failed":     ingest.StoreCreate,
	"processing": ingest.StorePay,
	"completed":  ingest.StorePay,
	"cancelled":  ingest.StoreCancel,
	"refunded":   ingest.StoreRefund,
}

// Parse decodes and translates a raw payload. A body that is not a JSON object, or an object without
// an id, is ErrNotAnOrder; an order that cannot be translated is a problem.Invalid naming the
// field (line_items[1].total).
func Parse(raw []byte) (*ingest.StoreOrder, error) {
	o, err := decode(raw)
	if err != nil {
		return nil, err
	}
	return o.translate()
}

func decode(raw []byte) (*order, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, ErrNotAnOrder
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(trimmed, &probe); err != nil || len(probe.ID) == 0 || string(probe.ID) == "null" {
		return nil, ErrNotAnOrder
	}
	var o order
	if err := json.Unmarshal(trimmed, &o); err != nil {
		return nil, typeError(err)
	}
	if ingest.ContainsNUL(trimmed) {
		return nil, problem.Fail(problem.Invalid, "strings must not contain the NUL character (\\u0000)")
	}
	return &o, nil
}

// typeError names the field of a wrongly typed value; json reports array elements without their index.
func typeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return problem.Fail(problem.Invalid, "%s: has the wrong type", te.Field)
	}
	return problem.Fail(problem.Invalid, "the order does not have the platform's order shape")
}

func invalid(path, format string, args ...any) error {
	return problem.Fail(problem.Invalid, "%s: %s", path, fmt.Sprintf(format, args...))
}

func (o *order) translate() (*ingest.StoreOrder, error) {
	action, ok := actions[o.Status]
	if !ok {
		return nil, invalid("status", "%q is not a mapped order status (pending, on-hold, failed, processing, completed, cancelled, refunded)", o.Status)
	}
	cur := strings.ToUpper(strings.TrimSpace(o.Currency))
	if len(cur) != 3 {
		return nil, invalid("currency", "must be a three-letter currency code")
	}
	lines, sum, err := o.lines(cur)
	if err != nil {
		return nil, err
	}
	shipping, err := amount("shipping_total", o.ShippingTotal, cur)
	if err != nil {
		return nil, err
	}
	tax, err := amount("total_tax", o.TotalTax, cur)
	if err != nil {
		return nil, err
	}
	total, err := amount("total", o.Total, cur)
	if err != nil {
		return nil, err
	}
	if sum+shipping+tax != total {
		return nil, invalid("total", "%s does not equal line totals + fee totals + shipping_total + total_tax", o.Total)
	}
	out := &ingest.StoreOrder{Action: action, Order: ingest.Order{
		ExternalID: string(o.ID), Currency: cur, Client: o.client(), Lines: lines,
		ShippingCents: shipping, TaxCents: tax,
		Metadata: map[string]any{"nativestore": map[string]any{"order_id": string(o.ID), "number": o.Number, "status": o.Status}},
	}}
	if total > 0 {
		if out.Payment, err = o.payment(total); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lines converts line items and fee lines and returns their sum in minor units. A line's total is
// preferred over its price: the total is what the platform charged, the price is derived from it.
func (o *order) lines(cur string) ([]ingest.Line, int64, error) {
	var out []ingest.Line
	var sum int64
	for i, l := range o.LineItems {
		gl, err := l.translate(linePath(i), cur)
		if err != nil {
			return nil, 0, err
		}
		if sum, err = addMinor(sum, gl.Quantity, gl.UnitPriceCents); err != nil {
			return nil, 0, invalid(linePath(i), "%v", err)
		}
		out = append(out, gl)
	}
	for i, f := range o.FeeLines {
		path := fmt.Sprintf("fee_lines[%d].total", i)
		t, err := amount(path, f.Total, cur)
		if err != nil {
			return nil, 0, err
		}
		if sum, err = addMinor(sum, 1, t); err != nil {
			return nil, 0, invalid(path, "%v", err)
		}
		out = append(out, ingest.Line{Description: f.Name, Quantity: 1, UnitPriceCents: t, Metadata: map[string]any{"kind": "fee"}})
	}
	return out, sum, nil
}

func linePath(i int) string { return fmt.Sprintf("line_items[%d]", i) }

// addMinor returns sum + quantity*unit, refusing anything at or over the amount bound (so an order of
// many huge lines cannot wrap around int64).
func addMinor(sum, quantity, unit int64) (int64, error) {
	limit := maxMinor.IntPart()
	if unit > 0 && quantity > (limit-sum)/unit {
		return 0, errors.New("the amount is too large")
	}
	return sum + quantity*unit, nil
}

// translate converts one line item. When the total does not split evenly into quantity unit prices
// (3 for 10.00), the line becomes one unit at the total, keeping the quantity in its metadata, so the
// order total is exactly what the platform charged.
func (l line) translate(path, cur string) (ingest.Line, error) {
	if l.Quantity < 1 {
		return ingest.Line{}, invalid(path+".quantity", "must be at least 1")
	}
	meta := map[string]any{"product_id": l.ProductID}
	if l.SKU != "" {
		meta["sku"] = l.SKU
	}
	if l.VariationID != 0 {
		meta["variation_id"] = l.VariationID
	}
	out := ingest.Line{Description: l.Name, Quantity: l.Quantity, Metadata: meta}
	if l.Total == "" {
		unit, err := ToMinor(string(l.Price), cur, true)
		if err != nil {
			return ingest.Line{}, invalid(path+".price", "%v", err)
		}
		out.UnitPriceCents = unit
		return out, nil
	}
	total, err := amount(path+".total", l.Total, cur)
	if err != nil {
		return ingest.Line{}, err
	}
	if total%l.Quantity == 0 {
		out.UnitPriceCents = total / l.Quantity
		return out, nil
	}
	meta["quantity"] = l.Quantity
	out.Description = fmt.Sprintf("%s × %d", l.Name, l.Quantity)
	out.Quantity, out.UnitPriceCents = 1, total
	return out, nil
}

// amount converts a money field; absent is zero.
func amount(path string, m money, cur string) (int64, error) {
	if m == "" {
		return 0, nil
	}
	v, err := ToMinor(string(m), cur, false)
	if err != nil {
		return 0, invalid(path, "%v", err)
	}
	return v, nil
}

// client is the order's customer: customer_id names it when the customer has an account, otherwise
// the billing email matches it. Empty billing fields are not sent, so they never blank stored ones.
func (o *order) client() *ingest.Client {
	b := o.Billing
	c := &ingest.Client{Email: nonEmpty(b.Email), FirstName: nonEmpty(b.FirstName), LastName: nonEmpty(b.LastName),
		Phone: nonEmpty(b.Phone), DisplayName: nonEmpty(strings.TrimSpace(b.FirstName + " " + b.LastName))}
	if o.CustomerID > 0 {
		c.ExternalID = strconv.FormatInt(o.CustomerID, 10)
	}
	if c.DisplayName == nil {
		c.DisplayName = nonEmpty(b.Company)
	}
	if b.Address1 != "" || b.City != "" || b.Postcode != "" || b.Country != "" {
		c.BillingAddress = &ingest.Address{AddressLine1: b.Address1, City: b.City, State: b.State,
			PostalCode: b.Postcode, Country: b.Country}
	}
	if c.ExternalID == "" && c.Email == nil {
		return nil // a guest order with no email: nothing to match or to keep
	}
	return c
}

// payment is the platform's payment for the whole order. Its external id is the order id (in the
// payment namespace), so processing followed by completed records it once.
func (o *order) payment(total int64) (*ingest.Payment, error) {
	p := &ingest.Payment{ExternalID: string(o.ID), AmountCents: total, Method: method(o.PaymentMethod),
		Provider: o.PaymentMethod, ProviderPaymentID: o.TransactionID}
	if o.DatePaidGMT != nil && *o.DatePaidGMT != "" {
		t, err := time.ParseInLocation("2006-01-02T15:04:05", *o.DatePaidGMT, time.UTC)
		if err != nil {
			return nil, invalid("date_paid_gmt", "must look like 2017-03-22T16:28:08")
		}
		p.PaidAt = &ingest.Time{Time: t}
	}
	return p, nil
}

// method maps the platform's payment gateway id to a payment method.
func method(gateway string) string {
	switch gateway {
	case "bacs":
		return "bank_transfer"
	case "cheque":
		return "check"
	case "cod":
		return "cash"
	case "paypal", "ppcp-gateway", "ppec_paypal":
		return "wallet"
	case "stripe", "woocommerce_payments", "square_credit_card", "braintree_credit_card":
		return "card"
	default:
		return "other"
	}
}

func nonEmpty(s string) *string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return &s
}
