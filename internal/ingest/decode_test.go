package ingest_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"wds/internal/ingest"
	"wds/internal/platform/answer"
	"wds/internal/platform/problem"
)

// FuzzDecodeOrder: any body decodes, or fails as invalid_json or validation_failed; never a panic and
// never an error answered with 500.
func FuzzDecodeOrder(f *testing.F) {
	for _, s := range []string{
		`{"external_id":"a","lines":[{"quantity":1,"unit_price_cents":100}]}`,
		`{"external_id":"a","lines":[{"quantity":1},{"quantity":"x"}],"payment":{"paid_at":"2026-01-01T00:00:00Z"}}`,
		`{"client":{"tags":[1],"billing_address":{"city":2}}}`,
		`[]`, `null`, `{"lines":{}}`, `{"payment":{"paid_at":5}}`, ``, `{`, `{"metadata":{"a":[1,{"b":null}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := ingest.DecodeOrder(body)
		if err == nil {
			return
		}
		if !errors.Is(err, answer.ErrInvalidJSON) && !errors.Is(err, problem.Invalid) {
			t.Fatalf("unexpected error kind %v", err)
		}
		if status, _, _ := answer.Of(err); status == http.StatusInternalServerError {
			t.Fatalf("500 for %q", body)
		}
	})
}

func TestFieldPathNamesTheLine(t *testing.T) {
	cases := map[string]string{
		`{"lines":[{"quantity":1},{"quantity":1},{"quantity":"2"}]}`:      "lines[2].quantity: must be an integer within 64 bits",
		`{"lines":[{"metadata":[]}]}`:                                     "lines[0].metadata: must be an object",
		`{"lines":[{"quantity":1}],"metadata":"x"}`:                       "metadata: must be an object",
		`{"payment":{"paid_at":"2026-13-01T00:00:00Z"}}`:                  "payment.paid_at: must be an RFC 3339 date-time",
		`{"client":{"billing_address":{"postal_code":94103}}}`:            "client.billing_address.postal_code: must be a string",
		`{"shipping_cents":1.5}`:                                          "shipping_cents: must be an integer within 64 bits",
		`{"lines":[{"quantity":1}],"client":{"email":["a@example.com"]}}`: "client.email: must be a string",
	}
	var o ingest.Order
	if err := ingest.Decode([]byte(`{"payment":{"paid_at":null},"client":null,"lines":null}`), &o); err != nil || o.Payment.PaidAt != nil {
		t.Fatalf("nulls: %v", err)
	}
	for body, want := range cases {
		var o ingest.Order
		err := ingest.Decode([]byte(body), &o)
		if !errors.Is(err, problem.Invalid) || problem.Detail(err) != want {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// TestMetadataKeepsEveryDigit: metadata numbers decode as json.Number on every path a body takes, the
// Integration API's order and the operator's app order (which decodes itself) alike.
func TestMetadataKeepsEveryDigit(t *testing.T) {
	const body = `{"store_id":"s","external_id":"a","metadata":{"n":12345678901234567890,"list":[9007199254740993]},
		"lines":[{"quantity":1,"metadata":{"n":9007199254740993}}]}`
	var app ingest.AppOrder
	if err := ingest.Decode([]byte(body), &app); err != nil {
		t.Fatal(err)
	}
	order, err := ingest.DecodeOrder([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]ingest.Order{"integration": order, "app": app.Order} {
		if n := o.Metadata["n"]; n != json.Number("12345678901234567890") {
			t.Errorf("%s: metadata.n is %T %v", name, n, n)
		}
		if l := o.Metadata["list"].([]any)[0]; l != json.Number("9007199254740993") {
			t.Errorf("%s: metadata.list[0] is %T %v", name, l, l)
		}
		if n := o.Lines[0].Metadata["n"]; n != json.Number("9007199254740993") {
			t.Errorf("%s: lines[0].metadata.n is %T %v", name, n, n)
		}
	}
}
