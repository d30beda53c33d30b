package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/apikeys"
	"wds/internal/ingest"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func newKey(t testing.TB) (*gorm.DB, *models.IntegrationKey) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	org, _ := workspace.NewService(db).CreateOrg(ctx, "Acme")
	store, _ := workspace.NewService(db).CreateStore(ctx, org.ID, "Shop", "USD")
	owner, _, _ := workspace.NewService(db).CreateUser(ctx, org.ID, uuid.NewString()+"@example.com", models.RoleOwner)
	box, _ := secrets.NewBox(secrets.GenerateKey())
	k, err := apikeys.NewService(db, box).CreateIntegrationKey(ctx, apikeys.NewIntegrationKey{OrgID: org.ID, StoreID: store.ID,
		ActorID: owner.ID, Scopes: models.IntegrationScopes})
	if err != nil {
		t.Fatal(err)
	}
	return db, k.Key
}

// TestAbandonedClaimIsTakenOver: a request that died mid-execution does not block its key for a day,
// and its late Finish cannot overwrite the answer of the request that took over.
func TestAbandonedClaimIsTakenOver(t *testing.T) {
	db, k := newKey(t)
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	body := []byte(`{"a":1}`)
	dead, replay, err := ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, "key", body, clock)
	if err != nil || dead == nil || replay != nil {
		t.Fatalf("first claim: %v %v %v", dead, replay, err)
	}
	now = now.Add(2 * time.Minute)
	alive, _, err := ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, "key", body, clock)
	if err != nil || alive == nil {
		t.Fatalf("takeover: %v %v", alive, err)
	}
	if err := alive.Finish(ctx, 201, []byte(`{"winner":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := dead.Finish(ctx, 500, []byte(`{"late":true}`)); err != nil {
		t.Fatal(err)
	}
	_, replay, err = ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, "key", body, clock)
	if err != nil || replay == nil || replay.Status != 201 || string(replay.Body) != `{"winner":true}` {
		t.Fatalf("replay %+v, %v", replay, err)
	}
	if _, _, err := ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, "key", []byte(`{}`), clock); !errors.Is(err, ingest.ErrIdempotencyConflict) {
		t.Fatalf("different body: %v", err)
	}
}

// TestInProgressClaimTimesOut: a second request waits for the first, then gives up with a conflict.
func TestInProgressClaimTimesOut(t *testing.T) {
	db, k := newKey(t)
	ctx := context.Background()
	start := time.Now()
	calls := 0
	// A clock that jumps 4 s per reading makes the 10 s wait end after a few polls.
	clock := func() time.Time { calls++; return start.Add(time.Duration(calls) * 4 * time.Second) }
	if c, _, err := ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, "busy", nil, func() time.Time { return start }); err != nil || c == nil {
		t.Fatal(err)
	}
	_, _, err := ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, "busy", nil, clock)
	if !errors.Is(err, ingest.ErrIdempotencyConflict) {
		t.Fatalf("got %v, want idempotency_conflict (in progress)", err)
	}
}

func TestReleasedClaimExecutesAgain(t *testing.T) {
	db, k := newKey(t)
	ctx := context.Background()
	c, _, err := ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, "k", []byte("x"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
	again, replay, err := ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, "k", []byte("other body"), time.Now)
	if err != nil || again == nil || replay != nil {
		t.Fatalf("after release: %v %v %v", again, replay, err)
	}
}

func TestCheckIdempotencyKey(t *testing.T) {
	long := make([]rune, 256)
	for i := range long {
		long[i] = 'k'
	}
	for key, ok := range map[string]bool{"a": true, string(long[:255]): true, string(long): false, "": false} {
		if err := ingest.CheckIdempotencyKey(key); (err == nil) != ok {
			t.Errorf("%d characters: %v", len(key), err)
		}
	}
}

// TestClaimsPurgeExpiredEntries: claims delete expired entries as they go, so the cache stays bounded.
func TestClaimsPurgeExpiredEntries(t *testing.T) {
	db, k := newKey(t)
	ctx := context.Background()
	now := time.Now()
	for i := range 15 {
		if _, _, err := ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, fmt.Sprint("old-", i), nil, func() time.Time { return now }); err != nil {
			t.Fatal(err)
		}
	}
	later := func() time.Time { return now.Add(ingest.IdempotencyTTL + time.Minute) }
	count := func() (n int64) {
		db.Raw(`SELECT count(*) FROM idempotency_keys`).Scan(&n)
		return n
	}
	if _, _, err := ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, "new-1", nil, later); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 6 { // 15 expired - 10 purged + 1 new
		t.Fatalf("%d entries after one claim, want 6", n)
	}
	if _, _, err := ingest.NewService(db, nil).ClaimIdempotency(ctx, k.ID, "new-2", nil, later); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d entries after two claims, want the 2 live ones", n)
	}
}
