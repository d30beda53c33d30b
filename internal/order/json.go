package order

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"wds/internal/platform/paging"

	"github.com/google/uuid"
)

// AppendPage appends a page of orders as encoding/json would write it (Page's tags), each order
// by AppendJSON, in one buffer.
func AppendPage(b []byte, p paging.Page[Order]) []byte {
	b = slices.Grow(b, 2048*len(p.Rows)+128)
	b = append(b, `{"rows":[`...)
	for i := range p.Rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = p.Rows[i].AppendJSON(b)
	}
	b = append(b, `],"next_cursor":`...)
	if p.NextCursor == nil {
		return append(b, "null}"...)
	}
	return append(p.NextCursor.AppendJSON(b), '}')
}

// MarshalJSON writes the order with AppendJSON.
func (o Order) MarshalJSON() ([]byte, error) { return o.AppendJSON(nil), nil }

// AppendJSON appends the order's JSON object to b, byte for byte what encoding/json writes from the
// struct's tags (a test holds it to that). encoding/json validates and compacts every json.RawMessage
// it writes: on a list page of fifty orders that, with its reflection, was a third of wds serve's CPU;
// appendRaw compacts PostgreSQL's JSON without validating it.
func (o *Order) AppendJSON(b []byte) []byte {
	return orderShape.appendJSON(b, o)
}

// appendUUID writes id as its MarshalText does, without String's allocation: four of them per order
// were a quarter of a page's encoding.
func appendUUID(b []byte, id uuid.UUID) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i, c := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hex[c>>4], hex[c&0xF])
	}
	return append(b, '"')
}

func appendNullUUID(b []byte, id *uuid.UUID) []byte {
	if id == nil {
		return append(b, "null"...)
	}
	return appendUUID(b, *id)
}

// appendString quotes s as encoding/json does. Text that needs no escape (printable ASCII other than
// the quote, the backslash and the HTML characters encoding/json escapes) is copied; anything else
// is left to encoding/json, so escapes are spelled exactly as it spells them.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(s) // a string always marshals
			return append(b, quoted...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

func appendNullString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

// appendRaw copies JSON PostgreSQL built, compact as encoding/json writes it: PostgreSQL spaces its
// output ({"a" : 1, "b" : 2}), and the API's answers must not read differently by where a value came
// from. An absent value is null. Like encoding/json it escapes <, >, & and U+2028/U+2029, so a page
// reads the same either way. The value is PostgreSQL's, so valid: no parse is needed, only a walk
// that tells strings from the structure around them, copying each string by a vectorised search for
// its closing quote (strings are most of the bytes).
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	for i := 0; i < len(raw); {
		switch c := raw[i]; c {
		case ' ', '\t', '\n', '\r':
			i++
		case '"':
			end := stringEnd(raw, i)
			b = appendEscaped(b, raw[i:end])
			i = end
		default:
			b = append(b, c)
			i++
		}
	}
	return b
}

// stringEnd is the index just past the JSON string that opens at raw[start].
func stringEnd(raw []byte, start int) int {
	i := start + 1
	for {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			return len(raw)
		}
		i += q
		backslashes := 0
		for k := i - 1; k > start && raw[k] == '\\'; k-- {
			backslashes++
		}
		i++
		if backslashes%2 == 0 {
			return i
		}
	}
}

// appendEscaped appends one JSON string, escaping <, >, & and U+2028/U+2029 as encoding/json does.
func appendEscaped(b []byte, str []byte) []byte {
	if !escapable(str) {
		return append(b, str...)
	}
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(str); i++ {
		switch c := str[i]; {
		case c == '<' || c == '>' || c == '&':
			b = append(append(b, str[start:i]...), '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(str) && str[i+1] == 0x80 && str[i+2]&^1 == 0xA8: // U+2028, U+2029
			b = append(append(b, str[start:i]...), '\\', 'u', '2', '0', '2', hex[str[i+2]&0xF])
			i += 2
			start = i + 1
		}
	}
	return append(b, str[start:]...)
}

// escapable reports whether a string holds a byte appendEscaped escapes. Most hold none, and four
// vectorised scans are several times faster than the byte loop.
func escapable(raw []byte) bool {
	return bytes.IndexByte(raw, '<') >= 0 || bytes.IndexByte(raw, '>') >= 0 ||
		bytes.IndexByte(raw, '&') >= 0 || bytes.IndexByte(raw, 0xE2) >= 0
}

func appendNullTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendTime(b, *t)
}

// appendTime writes t as time.Time's MarshalJSON does (RFC 3339 with the fraction's trailing zeros
// dropped); times here come from PostgreSQL, whose years fit the four digits that format allows.
func appendTime(b []byte, t time.Time) []byte {
	return append(t.AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
}
