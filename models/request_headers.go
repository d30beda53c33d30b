// What an attempt's POST carried, kept with the attempt (the delivery log's request_headers): wds's
// own headers with their values, which are not secrets (the signature proves the body, it grants
// nothing), and the endpoint's custom headers as the endpoint keeps them (SealHeaders): the names
// with blank values, the values sealed, since they may be credentials.

package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"maps"
)

// RequestHeaders are the headers one attempt sent (the request_headers column).
type RequestHeaders struct {
	Standard Headers `json:"standard"`
	Custom   Headers `json:"custom,omitempty"` // the names, blank values
	Sealed   []byte  `json:"sealed,omitempty"` // the custom set as sent, sealed
}

// SentHeaders is what an attempt records of the headers it set: custom, the endpoint's headers
// (sealed with box, as SealHeaders keeps an endpoint's), and every other header of sent, which are
// wds's own. An empty custom set seals nothing, so an attempt without custom headers costs no seal.
func SentHeaders(box Sealer, sent map[string]string, custom Headers) (*RequestHeaders, error) {
	out := &RequestHeaders{Standard: Headers{}}
	for name, value := range sent {
		if _, own := custom[name]; !own {
			out.Standard[name] = value
		}
	}
	if len(custom) == 0 {
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
// for a reader who may read them).
func (r *RequestHeaders) Shown(custom Headers) Headers {
	out := maps.Clone(r.Standard)
	if out == nil {
		out = Headers{}
	}
	maps.Copy(out, custom)
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
