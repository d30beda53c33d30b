package apikeys_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/apikeys"
	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type fixture struct {
	db                   *gorm.DB
	box                  *secrets.Box
	org, store           uuid.UUID
	owner, admin, member uuid.UUID
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{db: pgtest.New(t)}
	var err error
	if f.box, err = secrets.NewBox(secrets.GenerateKey()); err != nil {
		t.Fatal(err)
	}
	org, err := workspace.NewService(f.db).CreateOrg(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	store, err := workspace.NewService(f.db).CreateStore(ctx, org.ID, "Shop", "USD")
	if err != nil {
		t.Fatal(err)
	}
	f.org, f.store = org.ID, store.ID
	for _, r := range []struct {
		dst  *uuid.UUID
		role models.Role
	}{{&f.owner, models.RoleOwner}, {&f.admin, models.RoleAdmin}, {&f.member, models.RoleMember}} {
		u, _, err := workspace.NewService(f.db).CreateUser(ctx, org.ID, uuid.NewString()+"@example.com", r.role)
		if err != nil {
			t.Fatal(err)
		}
		*r.dst = u.ID
	}
	return f
}

func (f *fixture) req(actor uuid.UUID) apikeys.NewIntegrationKey {
	return apikeys.NewIntegrationKey{OrgID: f.org, StoreID: f.store, ActorID: actor, Scopes: []string{models.ScopeOrdersWrite}}
}

func TestCreateIntegrationKeyDefaultsAndSecrets(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	in := f.req(f.admin)
	in.RequireSignature = true
	in.IPAllowlist = []string{"10.1.2.3/8", "2001:db8::1/32", "192.0.2.4"}
	in.Label = "  Shopify  "
	k, err := apikeys.NewService(f.db, f.box).CreateIntegrationKey(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.Plaintext, apikeys.IntegrationKeyPrefix) || !strings.HasPrefix(k.SigningSecret, "whsec_") {
		t.Fatalf("key %q secret %q", k.Plaintext, k.SigningSecret)
	}
	var stored models.IntegrationKey
	f.db.Where("id = ?", k.Key.ID).Take(&stored)
	if stored.PayloadFormat != "generic" || stored.RateLimit != 600 || stored.Label != "Shopify" ||
		strings.Join(stored.IPAllowlist, ",") != "10.0.0.0/8,2001:db8::/32,192.0.2.4/32" {
		t.Fatalf("stored %+v", stored)
	}
	if string(stored.KeyHash) != string(secrets.HashAPIKey(k.Plaintext)) {
		t.Fatal("the key is not stored as its hash")
	}
	if strings.Contains(string(stored.SigningSecretSealed), k.SigningSecret) {
		t.Fatal("the signing secret is stored in the clear")
	}
	opened, err := apikeys.NewService(nil, f.box).SigningSecret(&stored)
	if err != nil || string(opened) != k.SigningSecret {
		t.Fatalf("sealed secret opens to %q, %v", opened, err)
	}
	var audit []string
	f.db.Raw(`SELECT details::text FROM audit_log WHERE action = 'integration_key.create' AND target_id = ?`, k.Key.ID).Scan(&audit)
	if len(audit) != 1 || strings.Contains(audit[0], k.Plaintext) || strings.Contains(audit[0], k.SigningSecret) {
		t.Fatalf("audit %v", audit)
	}
}

func TestNativestoreForcesSignature(t *testing.T) {
	f := newFixture(t)
	in := f.req(f.owner)
	in.PayloadFormat = models.FormatNativestore
	k, err := apikeys.NewService(f.db, f.box).CreateIntegrationKey(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Key.RequireSignature || k.SigningSecret == "" {
		t.Fatal("a nativestore key must require signatures")
	}
	plain, err := apikeys.NewService(f.db, f.box).CreateIntegrationKey(context.Background(), f.req(f.owner))
	if err != nil || plain.SigningSecret != "" || plain.Key.SigningSecretSealed != nil {
		t.Fatalf("a key without signatures got a secret: %v", err)
	}
}

func TestCreateIntegrationKeyValidation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	otherOrg, _ := workspace.NewService(f.db).CreateOrg(ctx, "Other")
	otherStore, _ := workspace.NewService(f.db).CreateStore(ctx, otherOrg.ID, "S", "USD")
	cases := []struct {
		name   string
		modify func(*apikeys.NewIntegrationKey)
		want   error
	}{
		{"member", func(in *apikeys.NewIntegrationKey) { in.ActorID = f.member }, workspace.ErrForbidden},
		{"stranger", func(in *apikeys.NewIntegrationKey) { in.ActorID = uuid.New() }, problem.NotFound}, // the org does not exist for them
		{"store of another org", func(in *apikeys.NewIntegrationKey) { in.StoreID = otherStore.ID }, problem.NotFound},
		{"unknown scope", func(in *apikeys.NewIntegrationKey) { in.Scopes = []string{"orders:delete"} }, problem.Invalid},
		{"bad format", func(in *apikeys.NewIntegrationKey) { in.PayloadFormat = "xml" }, problem.Invalid},
		{"bad cidr", func(in *apikeys.NewIntegrationKey) { in.IPAllowlist = []string{"10.0.0.0/33"} }, problem.Invalid},
		{"not an address", func(in *apikeys.NewIntegrationKey) { in.IPAllowlist = []string{"example.com"} }, problem.Invalid},
		{"rate limit high", func(in *apikeys.NewIntegrationKey) { in.RateLimit = 6001 }, problem.Invalid},
		{"rate limit negative", func(in *apikeys.NewIntegrationKey) { in.RateLimit = -1 }, problem.Invalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := f.req(f.owner)
			tc.modify(&in)
			if _, err := apikeys.NewService(f.db, f.box).CreateIntegrationKey(ctx, in); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	in := f.req(f.owner)
	in.RateLimit = 6000
	if _, err := apikeys.NewService(f.db, f.box).CreateIntegrationKey(ctx, in); err != nil {
		t.Fatalf("rate limit 6000: %v", err)
	}
	if n := countKeys(t, f.db); n != 1 {
		t.Fatalf("%d keys after rejected creates", n)
	}
}

func countKeys(t *testing.T, db *gorm.DB) int64 {
	t.Helper()
	var n int64
	db.Raw(`SELECT count(*) FROM integration_keys`).Scan(&n)
	return n
}

func TestAuthenticateAndRevokeIntegrationKey(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Now()
	k, err := apikeys.NewService(f.db, f.box).CreateIntegrationKey(ctx, f.req(f.owner))
	if err != nil {
		t.Fatal(err)
	}
	got, err := apikeys.NewService(f.db, nil).AuthenticateIntegration(ctx, k.Plaintext, now)
	if err != nil || got.ID != k.Key.ID || got.StoreID != f.store {
		t.Fatalf("authenticate: %v", err)
	}
	for _, bad := range []string{"pck_int_unknown", "pck_live_x", strings.TrimPrefix(k.Plaintext, "pck_int_")} {
		if _, err := apikeys.NewService(f.db, nil).AuthenticateIntegration(ctx, bad, now); !errors.Is(err, apikeys.ErrInvalidAPIKey) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := apikeys.NewService(f.db, nil).RevokeIntegrationKey(ctx, k.Key.ID, f.member); !errors.Is(err, workspace.ErrForbidden) {
		t.Fatalf("member revoke: %v", err)
	}
	r1, err := apikeys.NewService(f.db, nil).RevokeIntegrationKey(ctx, k.Key.ID, f.admin)
	if err != nil || r1.RevokedAt == nil {
		t.Fatalf("revoke: %v", err)
	}
	r2, _ := apikeys.NewService(f.db, nil).RevokeIntegrationKey(ctx, k.Key.ID, f.owner)
	if !r2.RevokedAt.Equal(*r1.RevokedAt) {
		t.Fatal("a second revoke moved revoked_at")
	}
	if _, err := apikeys.NewService(f.db, nil).AuthenticateIntegration(ctx, k.Plaintext, now); !errors.Is(err, apikeys.ErrKeyRevoked) {
		t.Fatalf("revoked key: %v", err)
	}
	if _, err := apikeys.NewService(f.db, nil).RevokeIntegrationKey(ctx, uuid.New(), f.owner); !errors.Is(err, problem.NotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	var actions []string
	f.db.Raw(`SELECT action FROM audit_log WHERE target_id = ? ORDER BY created_at`, k.Key.ID).Scan(&actions)
	if strings.Join(actions, ",") != "integration_key.create,integration_key.revoke,integration_key.revoke" {
		t.Fatalf("audit %v", actions)
	}

	in := f.req(f.owner)
	exp := now.Add(time.Hour)
	in.ExpiresAt = &exp
	e, _ := apikeys.NewService(f.db, f.box).CreateIntegrationKey(ctx, in)
	if _, err := apikeys.NewService(f.db, nil).AuthenticateIntegration(ctx, e.Plaintext, now); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	if _, err := apikeys.NewService(f.db, nil).AuthenticateIntegration(ctx, e.Plaintext, exp); !errors.Is(err, apikeys.ErrKeyExpired) {
		t.Fatalf("at expiry: %v", err)
	}
}

func TestSigningSecretUnconfigured(t *testing.T) {
	_, err := apikeys.NewService(nil, nil).SigningSecret(&models.IntegrationKey{RequireSignature: true})
	if !errors.Is(err, apikeys.ErrSignatureUnconfigured) {
		t.Fatalf("got %v", err)
	}
}
