package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
)

// Sealed layout: version (1 byte) | nonce (12 bytes) | AES-256-GCM ciphertext and tag (16 bytes).
//
// The version byte comes first so that rotating WDS_ENCRYPTION_KEY can be added later without a
// schema change: a future version value can name the key (or format) a row was sealed with, rows
// of both versions can be opened side by side, and they can be re-sealed lazily. It is also bound
// into the GCM tag as additional data, so it cannot be swapped on a stored value.
const (
	sealVersion1 byte = 1
	nonceSize         = 12
	keySize           = 32
)

var (
	// ErrInvalidKey reports a WDS_ENCRYPTION_KEY that is not standard base64 of exactly 32 bytes.
	ErrInvalidKey = errors.New("secrets: WDS_ENCRYPTION_KEY must be standard base64 of exactly 32 bytes")
	// ErrUndecryptable reports a sealed value that was tampered with, sealed under another key,
	// truncated, or of an unknown version. Callers get one sentinel because they can do nothing
	// different about the cases; the wrapped reason is only for the operator's logs.
	ErrUndecryptable = errors.New("secrets: sealed value cannot be decrypted")
)

// Box seals and opens secrets at rest with AES-256-GCM. It is safe for concurrent use.
type Box struct {
	aead cipher.AEAD
	// previous open values sealed under keys being rotated out (WithPrevious); Seal never uses them.
	previous []cipher.AEAD
}

// NewBox builds a Box from the WDS_ENCRYPTION_KEY value. Errors never echo the value.
func NewBox(base64Key string) (*Box, error) {
	aead, err := newAEAD(base64Key)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

func newAEAD(base64Key string) (cipher.AEAD, error) {
	key, err := base64.StdEncoding.DecodeString(base64Key)
	if err != nil {
		// The base64 error names only a byte offset, not the input.
		return nil, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	if len(key) != keySize {
		return nil, fmt.Errorf("%w: got %d bytes", ErrInvalidKey, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secrets: aes: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets: gcm: %w", err)
	}
	return aead, nil
}

// GenerateKey returns a fresh WDS_ENCRYPTION_KEY value (standard base64 of 32 random bytes).
func GenerateKey() string {
	key, err := randomBytes(keySize)
	if err != nil {
		// crypto/rand.Read is documented never to fail (Go 1.24+); if it ever does, there is no
		// safe key to return and no caller could recover.
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(key)
}

// Seal encrypts plaintext under a fresh random nonce. Random 96-bit nonces are safe here because
// one key seals far fewer than the 2^32 values after which collisions become a concern.
func (b *Box) Seal(plaintext []byte) ([]byte, error) {
	nonce, err := randomBytes(nonceSize)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 1+nonceSize+len(plaintext)+b.aead.Overhead())
	out = append(out, sealVersion1)
	out = append(out, nonce...)
	return b.aead.Seal(out, nonce, plaintext, []byte{sealVersion1}), nil
}

// Open decrypts a value made by Seal. Any failure is ErrUndecryptable.
func (b *Box) Open(sealed []byte) ([]byte, error) {
	if len(sealed) < 1+nonceSize+b.aead.Overhead() {
		return nil, fmt.Errorf("%w: too short", ErrUndecryptable)
	}
	if sealed[0] != sealVersion1 {
		return nil, fmt.Errorf("%w: unknown version", ErrUndecryptable)
	}
	for _, aead := range append([]cipher.AEAD{b.aead}, b.previous...) {
		if plaintext, err := openWith(aead, sealed); err == nil {
			return plaintext, nil
		}
	}
	return nil, fmt.Errorf("%w: authentication failed", ErrUndecryptable)
}

func openWith(aead cipher.AEAD, sealed []byte) ([]byte, error) {
	nonce, ciphertext := sealed[1:1+nonceSize], sealed[1+nonceSize:]
	return aead.Open(nil, nonce, ciphertext, sealed[:1])
}
