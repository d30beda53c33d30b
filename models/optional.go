package models

import "encoding/json"

// Optional is a field of an operator's PATCH (or create) body: Set when the body names it, Null when
// it names it as null (a PATCH then clears the field). Fields the body leaves out stay as they are.
type Optional[T any] struct {
	Set, Null bool
	Value     T
}

// UnmarshalJSON runs only for a field the body names, null included.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}
