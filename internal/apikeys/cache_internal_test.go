package apikeys

import (
	"context"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

// readLookup is the database lookup the cache decorates, counting its calls; during runs, if set,
// after the row was read and before the cache may keep it.
type readLookup struct {
	db     *gorm.DB
	mu     sync.Mutex
	calls  int
	during func()
}

func (r *readLookup) AuthenticateRead(ctx context.Context, token string, now time.Time) (*models.ReadKey, error) {
	k, err := NewService(r.db, nil).AuthenticateRead(ctx, token, now)
	r.mu.Lock()
	r.calls++
	during := r.during
	r.mu.Unlock()
	if during != nil {
		during()
	}
	return k, err
}

func (r *readLookup) count() int { r.mu.Lock(); defer r.mu.Unlock(); return r.calls }

func mintReadKey(t *testing.T, db *gorm.DB, expires *time.Time) (*models.ReadKey, string) {
	t.Helper()
	ctx := context.Background()
	people := workspace.NewService(db)
	org, err := people.CreateOrg(ctx, "Cache")
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := people.CreateUser(ctx, org.ID, "owner-"+org.ID.String()+"@cache.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	k, plain, err := NewService(db, nil).CreateReadKey(ctx, NewReadKey{OrgID: org.ID, ActorID: owner.ID, ExpiresAt: expires})
	if err != nil {
		t.Fatal(err)
	}
	return k, plain
}

// A change announced while a lookup is in flight may come after the lookup read the row: what that
// lookup read is not kept, so the next request reads the row again.
func TestCacheKeepsNothingReadBeforeAnInvalidation(t *testing.T) {
	db := pgtest.New(t)
	_, plain := mintReadKey(t, db, nil)
	c := NewCache()
	c.setLive(true)
	inner := &readLookup{db: db}
	reads := c.Reads(inner)
	hash := hex.EncodeToString(secrets.HashAPIKey(plain))
	inner.during = func() { c.drop(hash) } // the notification arrives now
	ctx, now := context.Background(), time.Now()
	for i := range 2 {
		if _, err := reads.AuthenticateRead(ctx, plain, now); err != nil {
			t.Fatal(err)
		}
		if inner.count() != i+1 {
			t.Fatalf("lookup %d served from memory after an invalidation during the first", i+1)
		}
	}
	inner.during = nil
	for range 3 {
		if _, err := reads.AuthenticateRead(ctx, plain, now); err != nil {
			t.Fatal(err)
		}
	}
	if inner.count() != 3 {
		t.Fatalf("%d database lookups for 3 requests without changes, want 1", inner.count()-2)
	}
}

// A cached key expires on time (the request's clock), is looked up again after CacheTTL, and is not
// used at all while the cache is not live.
func TestCacheExpiryTTLAndBypass(t *testing.T) {
	db := pgtest.New(t)
	expires := time.Now().Add(time.Hour)
	_, plain := mintReadKey(t, db, &expires)
	c := NewCache()
	clock := time.Now()
	c.now = func() time.Time { return clock }
	inner := &readLookup{db: db}
	reads := c.Reads(inner)
	ctx := context.Background()
	ask := func(now time.Time) error { _, err := reads.AuthenticateRead(ctx, plain, now); return err }

	for range 2 { // not live: every request looks up, nothing is kept
		if err := ask(time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	c.setLive(true)
	for range 2 {
		if err := ask(time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if inner.count() != 3 {
		t.Fatalf("%d lookups, want 2 while bypassed and 1 once live", inner.count())
	}
	if err := ask(expires); !errors.Is(err, ErrInvalidAPIKey) {
		t.Fatalf("cached key at its expiry: %v, want invalid_api_key", err)
	}
	clock = clock.Add(CacheTTL)
	if err := ask(time.Now()); err != nil || inner.count() != 5 {
		t.Fatalf("after the TTL: %v, %d lookups; want a fresh lookup", err, inner.count())
	}
}

// A new key's announcement ("new:" and its hash) forgets only that no key had the hash: the key a
// request already cached stays served from memory (before, the announcement arriving after the
// first request dropped it, and the next one missed), while a token refused just before the insert
// is looked up again at once, and an "unknown" a lookup in flight saw before the insert is not kept.
// A key a lookup in flight finds is kept although its announcement came while it ran (the first use
// of a key often races its own announcement).
func TestANewKeysAnnouncementKeepsWhatIsCached(t *testing.T) {
	db := pgtest.New(t)
	_, plain := mintReadKey(t, db, nil)
	c := NewCache()
	c.setLive(true)
	inner := &readLookup{db: db}
	reads := c.Reads(inner)
	ctx, now := context.Background(), time.Now()
	hash := hex.EncodeToString(secrets.HashAPIKey(plain))
	if _, err := reads.AuthenticateRead(ctx, plain, now); err != nil {
		t.Fatal(err)
	}
	c.handle(insertPrefix + hash)
	if _, err := reads.AuthenticateRead(ctx, plain, now); err != nil || inner.count() != 1 {
		t.Fatalf("after its announcement the cached key was looked up again (%d lookups, %v)", inner.count(), err)
	}

	_, later := mintReadKey(t, db, nil)
	laterHash := hex.EncodeToString(secrets.HashAPIKey(later))
	c.putUnknown(laterHash, c.gen) // refused a moment before its insert committed
	c.handle(insertPrefix + laterHash)
	if _, err := reads.AuthenticateRead(ctx, later, now); err != nil {
		t.Fatalf("a key announced as new is still refused from memory: %v", err)
	}
	gen, _ := c.begin()
	c.handle(insertPrefix + "ab")
	c.putUnknown("ab", gen)
	if c.knownUnknown("ab") {
		t.Fatal("an unknown a lookup saw before the insert was kept")
	}

	gen, _ = c.begin()
	c.handle(insertPrefix + "cd")
	c.put("cd", gen, "a key")
	if _, ok := c.get("cd"); !ok {
		t.Fatal("a key found while its own announcement arrived was not kept")
	}
	gen, _ = c.begin()
	c.handle("cd")
	c.put("cd", gen, "a key")
	if _, ok := c.get("cd"); ok {
		t.Fatal("a key found while its change arrived was kept")
	}
}
