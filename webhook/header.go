package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Header is a parsed X-PC-Signature value.
type Header struct {
	// Timestamp is t, in Unix seconds.
	Timestamp int64
	// Signatures holds every v1 value decoded to its 32 HMAC bytes; a sender may send several
	// (one per secret while a rotation is in grace), and one match is enough.
	Signatures [][]byte
}

// ParseHeader parses an X-PC-Signature value (or the Integration API's PC-Signature, the same
// scheme). An empty or all-whitespace value is ErrMissingHeader; anything that is not exactly one
// canonical t and at least one 64-hex-digit v1 is a *HeaderError. Unknown keys such as v0 are
// ignored so the scheme can grow new versions without breaking older verifiers.
func ParseHeader(value string) (Header, error) {
	if strings.TrimSpace(value) == "" {
		return Header{}, ErrMissingHeader
	}
	var p headerParser
	for elem := range strings.SplitSeq(value, ",") {
		if err := p.element(strings.TrimSpace(elem)); err != nil {
			return Header{}, err
		}
	}
	return p.result()
}

// headerParser accumulates elements; hasT is separate because t=0 is syntactically valid.
type headerParser struct {
	h    Header
	hasT bool
}

func (p *headerParser) element(elem string) error {
	key, val, ok := strings.Cut(elem, "=")
	if !ok || key == "" {
		return malformed("element is not key=value")
	}
	switch key {
	case "t":
		if p.hasT {
			return malformed("duplicate t")
		}
		t, err := parseTimestamp(val)
		if err != nil {
			return err
		}
		p.h.Timestamp, p.hasT = t, true
	case "v1":
		sig, err := parseV1(val)
		if err != nil {
			return err
		}
		p.h.Signatures = append(p.h.Signatures, sig)
	}
	return nil
}

func (p *headerParser) result() (Header, error) {
	if !p.hasT {
		return Header{}, malformed("missing t")
	}
	if len(p.h.Signatures) == 0 {
		return Header{}, malformed("missing v1")
	}
	return p.h, nil
}

// parseTimestamp accepts only the canonical decimal form (digits, no sign, no leading zeros).
// The signed material is "<t>." and the verifier rebuilds it from the parsed integer, so only a
// canonical t guarantees the rebuilt text is byte-for-byte what the sender signed.
func parseTimestamp(val string) (int64, error) {
	if val == "" || strings.TrimLeft(val, "0123456789") != "" {
		return 0, malformed("t is not a decimal integer")
	}
	if len(val) > 1 && val[0] == '0' {
		return 0, malformed("t has leading zeros")
	}
	t, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		return 0, malformed("t out of range")
	}
	return t, nil
}

func parseV1(val string) ([]byte, error) {
	if len(val) != hex.EncodedLen(sha256.Size) {
		return nil, malformed("v1 is not 64 hex digits")
	}
	sig, err := hex.DecodeString(val)
	if err != nil {
		return nil, malformed("v1 is not 64 hex digits")
	}
	return sig, nil
}
