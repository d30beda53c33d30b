package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/internal/apikeys"
	"wds/internal/platform/database"
	"wds/internal/platform/metrics"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
	"wds/test/pgtest"
)

// keyInstance is one `wds serve` as serveHTTP wires it: its own router, key cache and listener.
type keyInstance struct {
	t     *testing.T
	cache *apikeys.Cache
	srv   *httptest.Server
}

// newKeyInstance starts an instance over db whose listener connects with connect, and waits until
// its cache is in use.
func newKeyInstance(t *testing.T, db *gorm.DB, connect apikeys.Connect) *keyInstance {
	t.Helper()
	in := startKeyInstance(t, db, connect)
	waitFor(t, "the key cache to listen", in.cache.Live)
	return in
}

// startKeyInstance starts an instance over db whose listener connects with connect.
func startKeyInstance(t *testing.T, db *gorm.DB, connect apikeys.Connect) *keyInstance {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	stores := apitest.Services(db, nil, nil)
	in := &keyInstance{t: t, cache: apikeys.NewCache()}
	api.CacheKeys(&stores, in.cache)
	r, err := api.NewRouter(api.Deps{Services: stores, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	in.srv = httptest.NewServer(r)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { in.cache.Listen(ctx, connect, apikeys.NotifyDB(db), log); close(done) }()
	t.Cleanup(func() { in.srv.Close(); stop(); <-done })
	return in
}

// status sends method path with the bearer token and returns the status and error code.
func (in *keyInstance) status(method, path, token string) (int, string) {
	in.t.Helper()
	req, _ := http.NewRequest(method, in.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Error string }
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body.Error
}

// Paths a read key and an integration key may call: the first answers 200, the second 404 (no such
// order) once the key got through.
const (
	readPath = "/v1/vendors"
	intPath  = "/integrations/v1/orders/by-external/x"
)

// refusedWithin polls in until token is refused on path with code, and fails past limit.
func (in *keyInstance) refusedWithin(limit time.Duration, path, token, code string) {
	in.t.Helper()
	start := time.Now()
	for {
		if _, got := in.status(http.MethodGet, path, token); got == code {
			if took := time.Since(start); took > limit {
				in.t.Fatalf("%s refused after %s, want within %s", code, took, limit)
			}
			return
		}
		if time.Since(start) > 10*time.Second {
			in.t.Fatalf("never refused with %s", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cacheLookups reads the process's count of key cache lookups with result.
func cacheLookups(t *testing.T, result string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "wds_key_cache_lookups_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// servedBy checks that one request of in with token answers want and was served as result.
func (in *keyInstance) servedBy(path, token string, want int, result string) {
	in.t.Helper()
	before := cacheLookups(in.t, result)
	if got, code := in.status(http.MethodGet, path, token); got != want {
		in.t.Fatalf("GET %s: %d %s, want %d", path, got, code, want)
	}
	if cacheLookups(in.t, result) <= before {
		in.t.Fatalf("GET %s was not a key cache %s", path, result)
	}
}

// newKeyFixture is an org with a store and an owner over a fresh database, and the database's URL.
func newKeyFixture(t *testing.T) (*keyFixture, string) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.URL(t)
	db, err := database.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	f := &keyFixture{db: db}
	people := workspace.NewService(db)
	org, err := people.CreateOrg(ctx, "Cached")
	if err != nil {
		t.Fatal(err)
	}
	store, err := people.CreateStore(ctx, org.ID, "Main", "USD")
	if err != nil {
		t.Fatal(err)
	}
	owner, opToken, err := people.CreateUser(ctx, org.ID, "owner@cached.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	f.org, f.store, f.owner, f.opToken = org.ID, store.ID, owner.ID, opToken
	return f, url
}

type keyFixture struct {
	db         *gorm.DB
	org, store uuid.UUID
	owner      uuid.UUID
	opToken    string
}

func (f *keyFixture) readKey(t *testing.T) (uuid.UUID, string) {
	t.Helper()
	k, plain, err := apikeys.NewService(f.db, nil).CreateReadKey(context.Background(), apikeys.NewReadKey{OrgID: f.org, ActorID: f.owner})
	if err != nil {
		t.Fatal(err)
	}
	return k.ID, plain
}

func (f *keyFixture) integrationKey(t *testing.T) (uuid.UUID, string) {
	t.Helper()
	k, err := apikeys.NewService(f.db, nil).CreateIntegrationKey(context.Background(), apikeys.NewIntegrationKey{
		OrgID: f.org, StoreID: f.store, ActorID: f.owner, Scopes: []string{"orders:write"}})
	if err != nil {
		t.Fatal(err)
	}
	return k.Key.ID, k.Plaintext
}

// TestKeyRevocationReachesEveryInstance: two instances over one database, each with its key cache.
// Keys the second one serves from memory are refused by it within a second of their revocation
// through the first. When its listener's connection is cut it stops trusting its cache: keys are
// looked up (and revocations meanwhile honoured) until it listens again, and a key revoked while
// it was deaf is not served from what it cached before.
func TestKeyRevocationReachesEveryInstance(t *testing.T) {
	f, url := newKeyFixture(t)
	db := f.db

	a := newKeyInstance(t, db, apikeys.ConnectURL(url))
	// b's listener names itself, so the test can find its backend, and its reconnects wait for gate.
	var connects atomic.Int32
	gate := make(chan struct{})
	b := newKeyInstance(t, db, func(ctx context.Context) (*pgx.Conn, error) {
		if connects.Add(1) > 1 {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			return nil, err
		}
		cfg.RuntimeParams["application_name"] = "listener_b"
		return pgx.ConnectConfig(ctx, cfg)
	})

	readID, readKey := f.readKey(t)
	intID, intKey := f.integrationKey(t)
	b.servedBy(readPath, readKey, http.StatusOK, metrics.KeyCacheMiss)
	b.servedBy(readPath, readKey, http.StatusOK, metrics.KeyCacheHit)
	b.servedBy(intPath, intKey, http.StatusNotFound, metrics.KeyCacheMiss)
	b.servedBy(intPath, intKey, http.StatusNotFound, metrics.KeyCacheHit)

	if got, code := a.status(http.MethodPost, "/admin/v1/read-keys/"+readID.String()+"/revoke", f.opToken); got != http.StatusOK {
		t.Fatalf("revoke read key through a: %d %s", got, code)
	}
	b.refusedWithin(time.Second, readPath, readKey, "invalid_api_key")
	if got, code := a.status(http.MethodPost, "/admin/v1/integration-keys/"+intID.String()+"/revoke", f.opToken); got != http.StatusOK {
		t.Fatalf("revoke integration key through a: %d %s", got, code)
	}
	b.refusedWithin(time.Second, intPath, intKey, "integration_key_revoked")

	// A new expiry reaches b as a revocation does.
	expiringID, expiring := f.readKey(t)
	b.servedBy(readPath, expiring, http.StatusOK, metrics.KeyCacheMiss)
	b.servedBy(readPath, expiring, http.StatusOK, metrics.KeyCacheHit)
	if err := db.Exec(`UPDATE read_keys SET expires_at = now() - interval '1 second' WHERE id = ?`, expiringID).Error; err != nil {
		t.Fatal(err)
	}
	b.refusedWithin(time.Second, readPath, expiring, "invalid_api_key")

	// Three keys b holds in its cache: one stays live, one is revoked and asked for while b's
	// listener is down, one is revoked then and asked for only after it listens again.
	_, live := f.readKey(t)
	gapID, gap := f.readKey(t)
	staleID, stale := f.readKey(t)
	for _, k := range []string{live, gap, stale} {
		b.servedBy(readPath, k, http.StatusOK, metrics.KeyCacheMiss)
		b.servedBy(readPath, k, http.StatusOK, metrics.KeyCacheHit)
	}
	// Cut b's listener off; its reconnection waits for the gate.
	var killed int
	if err := db.Raw(`SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'listener_b') t`).Scan(&killed).Error; err != nil || killed != 1 {
		t.Fatalf("terminate b's listener: %d backends, %v", killed, err)
	}
	waitFor(t, "b to stop trusting its cache", func() bool { return !b.cache.Live() })
	for _, id := range []uuid.UUID{gapID, staleID} {
		if got, code := a.status(http.MethodPost, "/admin/v1/read-keys/"+id.String()+"/revoke", f.opToken); got != http.StatusOK {
			t.Fatalf("revoke read key through a: %d %s", got, code)
		}
	}
	b.servedBy(readPath, live, http.StatusOK, metrics.KeyCacheBypass)
	b.servedBy(readPath, live, http.StatusOK, metrics.KeyCacheBypass)
	if got, code := b.status(http.MethodGet, readPath, gap); got != http.StatusUnauthorized || code != "invalid_api_key" {
		t.Fatalf("key revoked while b was not listening: %d %s, want 401 invalid_api_key at once", got, code)
	}
	close(gate)
	waitFor(t, "b to listen again", b.cache.Live)
	// The stale key was cached before the gap and not asked for during it: only the clearing that
	// precedes trust keeps it from being served.
	if got, code := b.status(http.MethodGet, readPath, stale); got != http.StatusUnauthorized || code != "invalid_api_key" {
		t.Fatalf("key revoked while b was not listening: %d %s after it listened again, want 401 invalid_api_key", got, code)
	}
	b.servedBy(readPath, live, http.StatusOK, metrics.KeyCacheMiss)
	b.servedBy(readPath, live, http.StatusOK, metrics.KeyCacheHit)
}

// TestAListenerThatHearsNothingIsNotTrusted: a listener whose connection is up but hears none of the
// pool's notifications, as LISTEN behind PgBouncer in transaction mode, never lets its cache be
// used, so a revocation is honoured at once. Its connection goes to another database of the same
// cluster: its pings answer, but NOTIFY stays within one database.
func TestAListenerThatHearsNothingIsNotTrusted(t *testing.T) {
	f, url := newKeyFixture(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = "postgres"
	deaf := startKeyInstance(t, f.db, func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, cfg) })
	id, key := f.readKey(t)
	// Longer than a listener takes to hear its first probe, or to give up on it.
	for end := time.Now().Add(12 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if deaf.cache.Live() {
			t.Fatal("the key cache is in use while its listener hears nothing")
		}
	}
	deaf.servedBy(readPath, key, http.StatusOK, metrics.KeyCacheBypass)
	if err := f.db.Exec(`UPDATE read_keys SET revoked_at = now() WHERE id = ?`, id).Error; err != nil {
		t.Fatal(err)
	}
	if got, code := deaf.status(http.MethodGet, readPath, key); got != http.StatusUnauthorized || code != "invalid_api_key" {
		t.Fatalf("a key revoked behind a deaf listener: %d %s, want 401 invalid_api_key at once", got, code)
	}
}
