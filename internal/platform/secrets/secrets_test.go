package secrets

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// 32 random bytes in unpadded base64url are exactly 43 characters.
var (
	signingSecretRE = regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`)
	apiKeyRE        = regexp.MustCompile(`^wds_live_[A-Za-z0-9_-]{43}$`)
)

const uniquenessRounds = 1000

func TestNewSigningSecret(t *testing.T) {
	seen := map[string]bool{}
	for range uniquenessRounds {
		s, err := NewSigningSecret()
		if err != nil {
			t.Fatal(err)
		}
		if !signingSecretRE.MatchString(s) {
			t.Fatalf("secret %q does not match %s", s, signingSecretRE)
		}
		if raw, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(s, "whsec_")); err != nil || len(raw) != 32 {
			t.Fatalf("secret body is not standard padded base64 of 32 bytes: %v", err)
		}
		if seen[s] {
			t.Fatalf("duplicate secret after %d rounds", len(seen))
		}
		seen[s] = true
	}
}

func TestNewAPIKey(t *testing.T) {
	seen := map[string]bool{}
	for range uniquenessRounds {
		key, hash, err := NewAPIKey("wds_live_")
		if err != nil {
			t.Fatal(err)
		}
		if !apiKeyRE.MatchString(key) {
			t.Fatalf("key %q does not match %s", key, apiKeyRE)
		}
		if !bytes.Equal(hash, HashAPIKey(key)) {
			t.Fatal("returned hash differs from HashAPIKey(plaintext)")
		}
		if seen[key] {
			t.Fatalf("duplicate key after %d rounds", len(seen))
		}
		seen[key] = true
	}
}

func TestHashAPIKey(t *testing.T) {
	// echo -n abc | sha256sum
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := hex.EncodeToString(HashAPIKey("abc")); got != want {
		t.Fatalf("HashAPIKey(abc) = %s, want %s", got, want)
	}
	if bytes.Equal(HashAPIKey("k1"), HashAPIKey("k2")) {
		t.Fatal("different keys hash alike")
	}
	sum := sha256.Sum256([]byte("k1"))
	if !bytes.Equal(HashAPIKey("k1"), sum[:]) {
		t.Fatal("HashAPIKey is not SHA-256")
	}
}

func TestGenerateKey(t *testing.T) {
	seen := map[string]bool{}
	for range uniquenessRounds {
		k := GenerateKey()
		raw, err := base64.StdEncoding.DecodeString(k)
		if err != nil || len(raw) != 32 {
			t.Fatalf("GenerateKey() = %d bytes, %v; want standard base64 of 32 bytes", len(raw), err)
		}
		if _, err := NewBox(k); err != nil {
			t.Fatalf("NewBox(GenerateKey()) = %v", err)
		}
		if seen[k] {
			t.Fatalf("duplicate key after %d rounds", len(seen))
		}
		seen[k] = true
	}
}

func TestNewBoxRejectsBadKeys(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, n)) }
	tests := []struct{ name, key string }{
		{"empty", ""},
		{"16 bytes", b64(16)},
		{"24 bytes", b64(24)},
		{"31 bytes", b64(31)},
		{"33 bytes", b64(33)},
		{"64 bytes", b64(64)},
		{"not base64", "not-base64-at-all!!"},
		{"hex of 32 bytes", strings.Repeat("ab", 32)},
		{"url alphabet", strings.NewReplacer("+", "-", "/", "_").Replace("////" + b64(32)[4:])},
		{"unpadded", strings.TrimRight(b64(32), "=")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box, err := NewBox(tt.key)
			if !errors.Is(err, ErrInvalidKey) || box != nil {
				t.Fatalf("NewBox = %v, %v; want ErrInvalidKey", box, err)
			}
			if !strings.Contains(err.Error(), "WDS_ENCRYPTION_KEY") {
				t.Fatalf("error %q does not name WDS_ENCRYPTION_KEY", err)
			}
			if tt.key != "" && strings.Contains(err.Error(), tt.key) {
				t.Fatalf("error %q echoes the key", err)
			}
		})
	}
}

func newTestBox(t testing.TB) *Box {
	t.Helper()
	box, err := NewBox(GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	return box
}

func TestBoxRoundTrip(t *testing.T) {
	box := newTestBox(t)
	for _, plain := range [][]byte{nil, {}, []byte("whsec_x"), bytes.Repeat([]byte{0xAB}, 4096)} {
		sealed, err := box.Seal(plain)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 + 12 + len(plain) + 16; len(sealed) != want {
			t.Fatalf("sealed length %d, want %d", len(sealed), want)
		}
		if sealed[0] != 1 {
			t.Fatalf("version byte %d, want 1", sealed[0])
		}
		if len(plain) > 0 && bytes.Contains(sealed, plain) {
			t.Fatal("sealed value contains the plaintext")
		}
		got, err := box.Open(sealed)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("Open(Seal(%d bytes)) = %d bytes, %v", len(plain), len(got), err)
		}
	}
}

func TestBoxSealIsRandomized(t *testing.T) {
	box := newTestBox(t)
	seenNonce := map[string]bool{}
	for range uniquenessRounds {
		sealed, err := box.Seal([]byte("same secret"))
		if err != nil {
			t.Fatal(err)
		}
		nonce := string(sealed[1:13])
		if seenNonce[nonce] {
			t.Fatal("nonce reused")
		}
		seenNonce[nonce] = true
	}
}

// Flipping any bit of any region (version, nonce, ciphertext, tag) must make Open fail.
func TestBoxDetectsTampering(t *testing.T) {
	box := newTestBox(t)
	sealed, err := box.Seal([]byte("whsec_tamper-test-secret"))
	if err != nil {
		t.Fatal(err)
	}
	regions := map[string][2]int{
		"version":    {0, 1},
		"nonce":      {1, 13},
		"ciphertext": {13, len(sealed) - 16},
		"tag":        {len(sealed) - 16, len(sealed)},
	}
	for name, r := range regions {
		for i := r[0]; i < r[1]; i++ {
			for bit := range 8 {
				bad := bytes.Clone(sealed)
				bad[i] ^= 1 << bit
				if _, err := box.Open(bad); !errors.Is(err, ErrUndecryptable) {
					t.Fatalf("%s byte %d bit %d flipped: Open error = %v", name, i, bit, err)
				}
			}
		}
	}
	if _, err := box.Open(append(bytes.Clone(sealed), 0)); !errors.Is(err, ErrUndecryptable) {
		t.Fatalf("appended byte: Open error = %v", err)
	}
}

func TestBoxWrongKey(t *testing.T) {
	sealed, err := newTestBox(t).Seal([]byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newTestBox(t).Open(sealed); !errors.Is(err, ErrUndecryptable) {
		t.Fatalf("Open under another key: error = %v, want ErrUndecryptable", err)
	}
}

func TestBoxShortInput(t *testing.T) {
	box := newTestBox(t)
	sealed, err := box.Seal(nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(sealed) {
		if _, err := box.Open(sealed[:n]); !errors.Is(err, ErrUndecryptable) {
			t.Fatalf("Open of %d bytes: error = %v, want ErrUndecryptable", n, err)
		}
	}
}

func FuzzOpen(f *testing.F) {
	box := newTestBox(f)
	sealed, err := box.Seal([]byte("whsec_seed"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sealed)
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add(append([]byte{2}, sealed[1:]...))
	f.Add(bytes.Repeat([]byte{1}, 29))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := box.Open(in)
		if err != nil {
			if !errors.Is(err, ErrUndecryptable) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if !bytes.Equal(in, sealed) || string(got) != "whsec_seed" {
			t.Fatalf("Open accepted a value it never sealed: %x", in)
		}
	})
}

func TestWellFormedKey(t *testing.T) {
	key, _, err := NewAPIKey("pck_live_")
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{
		key:                    true,
		"pck_int_" + key[9:]:   false, // another prefix
		key[:len(key)-1]:       false, // short
		key + "A":              false, // long
		key[:len(key)-1] + "=": false, // not base64url
		"":                     false,
	} {
		if got := WellFormedKey("pck_live_", s); got != want {
			t.Errorf("WellFormedKey(%q) = %v, want %v", s, got, want)
		}
	}
}
