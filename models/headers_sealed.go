// How an endpoint's custom headers are kept: the values may be credentials (an Authorization token),
// so the row holds the whole set sealed (headers_sealed, under WDS_ENCRYPTION_KEY like signing
// secrets) and, in headers, only the names with blank values. Rows written before the values were
// sealed hold them in headers and nothing in headers_sealed; OpenHeaders reads both forms, and
// `wds admin secrets reencrypt` seals the old one.

package models

import (
	"encoding/json"
	"fmt"
	"maps"
)

// Sealer seals and opens values at rest (secrets.Box).
type Sealer interface {
	Seal(plaintext []byte) ([]byte, error)
	Open(sealed []byte) ([]byte, error)
}

// Masked is the set with every value blank: the names alone, which is what a member, an event to
// other receivers and the headers column are given.
func (h Headers) Masked() Headers {
	out := make(Headers, len(h))
	for name := range h {
		out[name] = ""
	}
	return out
}

// SealHeaders returns what a row stores for h: the names with blank values (headers) and the whole
// set sealed (headers_sealed). The empty set is sealed too, so every row the service writes has one
// form.
func SealHeaders(box Sealer, h Headers) (Headers, []byte, error) {
	raw, err := json.Marshal(map[string]string(h.orEmpty()))
	if err != nil {
		return nil, nil, fmt.Errorf("encode headers: %w", err)
	}
	sealed, err := box.Seal(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("seal headers: %w", err)
	}
	return h.Masked(), sealed, nil
}

// OpenHeaders is the set a row stores (see HeadersFromPlaintext).
func OpenHeaders(box Sealer, stored Headers, sealed []byte) (Headers, error) {
	h, _, err := HeadersFromPlaintext(box, stored, sealed)
	return h, err
}

// HeadersFromPlaintext is the set a row stores, and whether it is the plaintext headers column rather
// than the sealed set: when nothing is sealed (a row written before values were sealed), or when the
// column is not the sealed set's names with blank values, which every writer of the sealed form
// writes together, so the column was rewritten since by a version that does not seal (during a
// roll-out) and is the newer set.
func HeadersFromPlaintext(box Sealer, stored Headers, sealed []byte) (Headers, bool, error) {
	if sealed == nil {
		return stored.orEmpty(), true, nil
	}
	raw, err := box.Open(sealed)
	if err != nil {
		return nil, false, fmt.Errorf("open headers: %w", err)
	}
	out := Headers{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, false, fmt.Errorf("decode headers: %w", err)
	}
	if !maps.Equal(stored.orEmpty(), out.Masked()) {
		return stored.orEmpty(), true, nil
	}
	return out, false, nil
}

func (h Headers) orEmpty() Headers {
	if h == nil {
		return Headers{}
	}
	return h
}
