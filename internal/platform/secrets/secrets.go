// Package secrets makes and protects secret material: signing secrets, API keys and operator
// tokens, and the AES-256-GCM box that keeps signing secrets (and endpoints' custom header values,
// models.SealHeaders) encrypted at rest.
//
// API keys are never stored: only their SHA-256 hash is, and lookups go by hash, so a database
// leak does not yield usable keys. Signing secrets must be recoverable (they key HMACs), so they
// are sealed with a key that lives outside the database. No error in this package carries secret
// material.
package secrets

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
)

const randomSize = 32 // bytes of entropy in every generated secret, key and token

// SigningSecretPrefix marks signing secrets (integration keys' and endpoints').
const SigningSecretPrefix = "whsec_"

// NewSigningSecret returns a fresh signing secret: "whsec_" and 32 random bytes in standard, padded
// base64, the form the official Standard Webhooks libraries decode to their HMAC key as shown
// (docs/webhooks.md#standard-webhooks). Secrets made before were unpadded base64url; they keep working (webhook.StandardKey).
func NewSigningSecret() (string, error) {
	b, err := randomBytes(randomSize)
	if err != nil {
		return "", err
	}
	return SigningSecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// NewAPIKey returns a fresh key (prefix and 32 random bytes in unpadded base64url) and the hash to
// store. The plaintext is shown once and then forgotten; the prefix lets humans and secret
// scanners tell key kinds apart. It serves operator tokens too.
func NewAPIKey(prefix string) (plaintext string, hash []byte, err error) {
	b, err := randomBytes(randomSize)
	if err != nil {
		return "", nil, err
	}
	plaintext = prefix + base64.RawURLEncoding.EncodeToString(b)
	return plaintext, HashAPIKey(plaintext), nil
}

// WellFormedKey reports whether s could be a key NewAPIKey made with prefix: the prefix and then 32
// bytes in unpadded base64url. Anything else is refused before it costs a database lookup.
func WellFormedKey(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(randomSize) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}

// HashAPIKey returns the SHA-256 of the presented key. A plain, unsalted hash suffices because the
// keys carry 256 random bits (nothing to brute-force), and it must be deterministic so the key can
// be found by an indexed lookup on the hash rather than compared row by row.
func HashAPIKey(plaintext string) []byte {
	sum := sha256.Sum256([]byte(plaintext))
	return sum[:]
}

func randomBytes(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("secrets: read random bytes: %w", err)
	}
	return b, nil
}
