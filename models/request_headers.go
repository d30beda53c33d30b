// What an attempt's POST carried, kept with the attempt (the delivery log's request_headers): wds's
// own headers with their values, which are not secrets (the signature proves the body, it grants
// nothing), and the endpoint's custom headers as the endpoint keeps them (SealHeaders): the names
// with blank values, the values sealed, since they may be credentials. The custom names are kept as
// the endpoint spells them and shown as the wire carries them (Shown).

package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"maps"
	"net/textproto"
)

// RequestHeaders are the headers one attempt sent (the request_headers column).
type RequestHeaders struct {
	Standard Headers `json:"standard"`
	Custom   Headers `json:"custom,omitempty"` // the names, blank values
	Sealed   []byte  `json:"sealed,omitempty"` // the custom set as sent, sealed
}

// SentHeaders is what an attempt records of the headers it set: custom, the endpoint's headers, and
// every other header of sent (named as the wire carries them), which are wds's own. sealed is the
// endpoint's own sealed set of custom (SealHeaders), recorded as is: the attempt seals nothing. Only
// an endpoint that keeps none (a row from before values were sealed) has custom sealed with box here.
// An empty custom set seals nothing.
func SentHeaders(box Sealer, sent map[string]string, custom Headers, sealed []byte) (*RequestHeaders, error) {
	own := make(map[string]bool, len(custom))
	for name := range custom {
		own[textproto.CanonicalMIMEHeaderKey(name)] = true
	}
	out := &RequestHeaders{Standard: Headers{}}
	for name, value := range sent {
		if !own[name] {
			out.Standard[name] = value
		}
	}
	if len(custom) == 0 {
		return out, nil
	}
	if sealed != nil {
		out.Custom, out.Sealed = custom.Masked(), sealed
		return out, nil
	}
	masked, sealed, err := SealHeaders(box, custom)
	if err != nil {
		return nil, err
	}
	out.Custom, out.Sealed = masked, sealed
	return out, nil
}

// Shown is every header sent, the custom ones as custom gives them (blank values, or the values
// for a reader who may read them), each named as the wire carried it.
func (r *RequestHeaders) Shown(custom Headers) Headers {
	out := maps.Clone(r.Standard)
	if out == nil {
		out = Headers{}
	}
	for name, value := range custom {
		out[textproto.CanonicalMIMEHeaderKey(name)] = value
	}
	return out
}

// Scan reads the jsonb column; null is nil (nothing recorded).
func (r *RequestHeaders) Scan(src any) error {
	raw, err := columnBytes(src, "request headers")
	if err != nil || raw == nil {
		return err
	}
	if err := json.Unmarshal(raw, r); err != nil {
		return fmt.Errorf("decode request headers: %w", err)
	}
	return nil
}

// Value writes the jsonb column.
func (r *RequestHeaders) Value() (driver.Value, error) {
	if r == nil {
		return nil, nil
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode request headers: %w", err)
	}
	return string(raw), nil
}
