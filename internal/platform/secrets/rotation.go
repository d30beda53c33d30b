package secrets

import (
	"crypto/cipher"
	"fmt"
)

// WithPrevious returns a Box that seals under b's key and also opens values sealed under any of the
// previous keys (WDS_ENCRYPTION_KEY_PREVIOUS). Running every instance with it for the length of a
// rotation lets old and new values be read side by side while they are re-sealed. Errors never echo
// a key: they name its position.
func (b *Box) WithPrevious(base64Keys ...string) (*Box, error) {
	out := &Box{aead: b.aead, previous: append([]cipher.AEAD(nil), b.previous...)}
	for i, k := range base64Keys {
		aead, err := newAEAD(k)
		if err != nil {
			return nil, fmt.Errorf("previous key %d: %w", i+1, err)
		}
		out.previous = append(out.previous, aead)
	}
	return out, nil
}

// SealedWithCurrent reports whether sealed opens under the sealing key itself, so re-encryption can
// leave values that are already current alone.
func (b *Box) SealedWithCurrent(sealed []byte) bool {
	if len(sealed) < 1+nonceSize+b.aead.Overhead() || sealed[0] != sealVersion1 {
		return false
	}
	_, err := openWith(b.aead, sealed)
	return err == nil
}
