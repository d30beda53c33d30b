package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"wds/internal/platform/answer"
	"wds/internal/platform/problem"
)

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
