package apikeys

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/internal/platform/metrics"
	"wds/internal/platform/secrets"
	"wds/models"
)

// CacheTTL is how long an authenticated key is served from memory before it is looked up again. A
// change to a key reaches every instance through its notification (notify.go) long before; the TTL
// only bounds what a change no notification announced could cost, and keeps memory to active keys.
const CacheTTL = 5 * time.Minute

// Cache keeps the keys a process authenticated, by the hash of their plaintext, so that a request
// costs no database round trip to authenticate. It is trusted only while its Listener is listening
// for key changes: before the first LISTEN succeeds, and from the moment the notification
// connection fails until it has listened again and cleared every entry, lookups go to the database
// and nothing is kept.
//
// A lookup that began before an invalidation may read the row as it was; its result is kept only
// if no invalidation came while it ran (gen), so a revoked key is never put back.
type Cache struct {
	mu      sync.Mutex
	live    bool              // the listener is listening; otherwise the cache is bypassed
	gen     gen               // bumped by every invalidation
	entries map[string]cached // by hex of the key hash, as notifications name it
	// unknown are the hashes no key had when looked up, and when: a flood of made-up keys costs one
	// database turn for each new one, not one for each request. A key minted with such a hash is
	// announced like any change (its insert notifies), which forgets the hash at once.
	unknown map[string]time.Time
	now     func() time.Time // the process clock, for the TTL (requests bring their own for expiry)
}

// UnknownTTL is how long a hash no key had is answered as unknown from memory.
const UnknownTTL = time.Minute

// maxUnknown bounds the unknown hashes kept: past it they are all forgotten, so a flood of ever new
// made-up keys costs memory for at most this many.
const maxUnknown = 10_000

// gen counts invalidations in two kinds. A key found by a lookup is kept unless a key changed or the
// listener went down while it ran (changes); a new key's insert says nothing against it, so a key
// used before its own announcement arrives is still kept. "No key has this hash" is kept only if,
// in addition, no key was minted meanwhile (mints): the insert may be the very key looked for.
type gen struct{ changes, mints uint64 }

type cached struct {
	key any // *ReadKey or *IntegrationKey; the prefixes keep their hashes apart
	at  time.Time
}

// NewCache returns an empty cache that is bypassed until Listen is listening.
func NewCache() *Cache {
	return &Cache{entries: map[string]cached{}, unknown: map[string]time.Time{}, now: time.Now}
}

// get returns the entry for hash when the cache is live and the entry is fresh.
func (c *Cache) get(hash string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live {
		metrics.KeyCacheLookup(metrics.KeyCacheBypass)
		return nil, false
	}
	e, ok := c.entries[hash]
	if !ok || c.now().Sub(e.at) >= CacheTTL {
		delete(c.entries, hash)
		metrics.KeyCacheLookup(metrics.KeyCacheMiss)
		return nil, false
	}
	metrics.KeyCacheLookup(metrics.KeyCacheHit)
	return e.key, true
}

// knownUnknown reports whether hash was looked up and found to be no key within UnknownTTL.
func (c *Cache) knownUnknown(hash string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.unknown[hash]
	if !c.live || !ok || c.now().Sub(at) >= UnknownTTL {
		delete(c.unknown, hash)
		return false
	}
	metrics.KeyCacheLookup(metrics.KeyCacheUnknown)
	return true
}

// putUnknown remembers that hash names no key, unless a change or a mint came since begin returned g.
func (c *Cache) putUnknown(hash string, g gen) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || c.gen != g {
		return
	}
	if len(c.unknown) >= maxUnknown {
		clear(c.unknown)
	}
	c.unknown[hash] = c.now()
}

// begin is taken before a database lookup: the generation to hand to put, and whether a result may
// be kept at all.
func (c *Cache) begin() (gen, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen, c.live
}

// put keeps key unless a key changed since begin returned g, or the cache went down.
func (c *Cache) put(hash string, g gen, key any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live && c.gen.changes == g.changes {
		c.entries[hash] = cached{key: key, at: c.now()}
	}
}

// drop forgets one key: a notification named it.
func (c *Cache) drop(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen.changes++
	delete(c.entries, hash)
	delete(c.unknown, hash)
}

// minted forgets that no key had hash: one was just inserted. The key cached under it, if a request
// already found it, stays, as does a key a lookup in flight finds. Lookups in flight keep no
// "unknown" they saw before the insert.
func (c *Cache) minted(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen.mints++
	delete(c.unknown, hash)
}

// setLive clears every entry and says whether the cache may be trusted from now on: true once the
// listener listens again (changes it missed are forgotten with the entries), false when it lost
// its connection.
func (c *Cache) setLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen.changes++
	c.live = live
	clear(c.entries)
	clear(c.unknown)
}

// Live reports whether the cache is being used: its listener is listening.
func (c *Cache) Live() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live
}

// lookup serves hash from the cache when it holds a key still usable at now, or answers
// ErrInvalidAPIKey when it remembers that no key has it, else asks load and keeps what it finds. fresh reports whether a kept key is still usable at the request's now (its
// expiry passes while it is cached); copy gives each caller its own value.
func lookup[K any](ctx context.Context, c *Cache, token string, now time.Time,
	fresh func(*K, time.Time) bool, load func(context.Context, string, time.Time) (*K, error)) (*K, error) {
	hash := hex.EncodeToString(secrets.HashAPIKey(token))
	if c.knownUnknown(hash) {
		return nil, ErrInvalidAPIKey
	}
	if v, ok := c.get(hash); ok {
		if k := v.(*K); fresh(k, now) {
			cp := *k
			return &cp, nil
		}
	}
	gen, keep := c.begin()
	k, err := load(ctx, token, now)
	switch {
	case !keep:
	case err == nil:
		cp := *k
		c.put(hash, gen, &cp)
	case errors.Is(err, ErrInvalidAPIKey):
		c.putUnknown(hash, gen)
	}
	return k, err
}

// ReadKeyLookup authenticates read keys (AuthenticateRead's contract).
type ReadKeyLookup interface {
	AuthenticateRead(ctx context.Context, token string, now time.Time) (*models.ReadKey, error)
}

// IntegrationKeyLookup authenticates integration keys (AuthenticateIntegration's contract).
type IntegrationKeyLookup interface {
	AuthenticateIntegration(ctx context.Context, token string, now time.Time) (*models.IntegrationKey, error)
}

// Reads decorates next with the cache: only keys next accepted are kept.
func (c *Cache) Reads(next ReadKeyLookup) ReadKeyLookup { return cachedReads{c, next} }

// Integrations decorates next with the cache: only keys next accepted are kept.
func (c *Cache) Integrations(next IntegrationKeyLookup) IntegrationKeyLookup {
	return cachedIntegrations{c, next}
}

type cachedReads struct {
	c    *Cache
	next ReadKeyLookup
}

func (r cachedReads) AuthenticateRead(ctx context.Context, token string, now time.Time) (*models.ReadKey, error) {
	return lookup(ctx, r.c, token, now, func(k *models.ReadKey, now time.Time) bool { return unexpired(k.ExpiresAt, now) },
		r.next.AuthenticateRead)
}

type cachedIntegrations struct {
	c    *Cache
	next IntegrationKeyLookup
}

func (r cachedIntegrations) AuthenticateIntegration(ctx context.Context, token string, now time.Time) (*models.IntegrationKey, error) {
	return lookup(ctx, r.c, token, now, func(k *models.IntegrationKey, now time.Time) bool { return unexpired(k.ExpiresAt, now) },
		r.next.AuthenticateIntegration)
}

// unexpired is the expiry rule of both kinds of key: a key expires at its expires_at.
func unexpired(expiresAt *time.Time, now time.Time) bool {
	return expiresAt == nil || now.Before(*expiresAt)
}

// FlushInterval bounds how stale last_used_at may be (docs/integration-api.md allows 5 s).
const FlushInterval = 2 * time.Second

// LastUsed batches last_used_at writes so authentication costs no database write per request.
type LastUsed struct {
	db  *gorm.DB
	log logrus.FieldLogger

	mu      sync.Mutex
	pending map[string]map[uuid.UUID]time.Time // table -> key id -> last use
}

// NewLastUsed returns a batcher; run Run in a goroutine.
func NewLastUsed(db *gorm.DB, log logrus.FieldLogger) *LastUsed {
	return &LastUsed{db: db, log: log, pending: map[string]map[uuid.UUID]time.Time{}}
}

// Tables whose keys the batcher touches.
const (
	ReadKeysTable        = "read_keys"
	IntegrationKeysTable = "integration_keys"
)

// touchSQL opens each table's batched write of last uses, which ends with touchedRows; each table is
// named in its statement.
var touchSQL = map[string]string{
	ReadKeysTable:        `UPDATE read_keys k SET last_used_at = u.at FROM (VALUES `,
	IntegrationKeysTable: `UPDATE integration_keys k SET last_used_at = u.at FROM (VALUES `,
}

const touchedRows = `) AS u(id, at) WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`

// Touch records a use of key id in table.
func (l *LastUsed) Touch(table string, id uuid.UUID, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.pending[table]
	if m == nil {
		m = map[uuid.UUID]time.Time{}
		l.pending[table] = m
	}
	m[id] = at
}

// Run flushes every FlushInterval until ctx ends, then flushes once more.
func (l *LastUsed) Run(ctx context.Context) {
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			l.Flush(context.WithoutCancel(ctx))
			return
		case <-t.C:
			l.Flush(ctx)
		}
	}
}

// Flush writes pending uses, one statement per table.
func (l *LastUsed) Flush(ctx context.Context) {
	l.mu.Lock()
	batch := l.pending
	l.pending = map[string]map[uuid.UUID]time.Time{}
	l.mu.Unlock()
	for table, uses := range batch {
		values := make([]string, 0, len(uses))
		args := make([]any, 0, 2*len(uses))
		for id, at := range uses {
			values = append(values, "(?::uuid, ?::timestamptz)")
			args = append(args, id, at)
		}
		err := l.db.WithContext(ctx).Exec(touchSQL[table]+strings.Join(values, ", ")+touchedRows, args...).Error
		if err != nil {
			l.log.WithError(err).Warn("could not record key last_used_at")
		}
	}
}
