package apikeys

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"wds/internal/platform/secrets"
	"wds/test/pgtest"
)

// A token that named no key is refused from memory for UnknownTTL, so a made-up key tried again costs
// no database turn; after the TTL it is looked up again; what is remembered is bounded (maxUnknown),
// and nothing is remembered while the key change listener is down, since a key minted meanwhile would
// not be announced to clear it.
func TestAMadeUpKeyIsRememberedAsUnknownForAWhile(t *testing.T) {
	db := pgtest.New(t)
	c := NewCache()
	clock := time.Now()
	c.now = func() time.Time { return clock }
	c.setLive(true)
	inner := &readLookup{db: db}
	reads := c.Reads(inner)
	madeUp, _, err := secrets.NewAPIKey(ReadKeyPrefix)
	if err != nil {
		t.Fatal(err)
	}
	ask := func() {
		t.Helper()
		if _, err := reads.AuthenticateRead(context.Background(), madeUp, time.Now()); !errors.Is(err, ErrInvalidAPIKey) {
			t.Fatalf("a made-up key: %v, want invalid_api_key", err)
		}
	}
	for range 3 {
		ask()
	}
	if inner.count() != 1 {
		t.Fatalf("a made-up key asked 3 times cost %d lookups, want 1", inner.count())
	}
	clock = clock.Add(UnknownTTL)
	ask()
	if inner.count() != 2 {
		t.Fatalf("after UnknownTTL: %d lookups, want a fresh one", inner.count())
	}

	for i := range maxUnknown + 1 {
		c.putUnknown(fmt.Sprintf("%064x", i), c.gen)
	}
	if n := len(c.unknown); n > maxUnknown {
		t.Fatalf("%d unknown hashes kept, want at most %d", n, maxUnknown)
	}

	c.setLive(false)
	ask()
	ask()
	if inner.count() != 4 {
		t.Fatalf("with the listener down a made-up key asked twice cost %d lookups, want 2", inner.count()-2)
	}
}
