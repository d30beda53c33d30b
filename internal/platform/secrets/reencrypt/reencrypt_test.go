package reencrypt_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/apikeys"
	"wds/internal/endpoints"
	"wds/internal/platform/secrets"
	"wds/internal/platform/secrets/reencrypt"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type fixture struct {
	ctx        context.Context
	db         *gorm.DB
	org, owner uuid.UUID
	store      uuid.UUID
	// plain is every sealed value's plaintext, by column and row.
	plain map[reencrypt.Column]map[uuid.UUID]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	org, err := workspace.NewService(db).CreateOrg(ctx, "Rotating")
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := workspace.NewService(db).CreateUser(ctx, org.ID, "owner@rotating.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	store, err := workspace.NewService(db).CreateStore(ctx, org.ID, "Main", "USD")
	if err != nil {
		t.Fatal(err)
	}
	plain := map[reencrypt.Column]map[uuid.UUID]string{}
	for _, c := range reencrypt.Columns {
		plain[c] = map[uuid.UUID]string{}
	}
	return &fixture{ctx: ctx, db: db, org: org.ID, owner: owner.ID, store: store.ID, plain: plain}
}

// endpoint and intKey make secrets the way the product does, sealed with box.
func (f *fixture) endpoint(t *testing.T, box *secrets.Box) {
	t.Helper()
	svc := endpoints.NewService(f.db, box, endpoints.Options{AllowPrivate: true})
	ep, err := svc.Create(f.ctx, endpoints.CreateInput{OrgID: f.org, ActorID: f.owner, URL: "https://127.0.0.1/hook", EventTypes: []string{"order.created"}})
	if err != nil {
		t.Fatal(err)
	}
	// Disabled so the org's limit of ten enabled endpoints does not cap the fixture.
	if _, err := svc.Disable(f.ctx, ep.ID, f.owner); err != nil {
		t.Fatal(err)
	}
	// Rotated with a grace, so the rotated-out secret is sealed beside the current one.
	rot, err := svc.RotateSecret(f.ctx, ep.ID, f.owner, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	f.plain[reencrypt.Column{Table: "webhook_endpoints", Column: "secret_sealed"}][ep.ID] = rot.Secret
	f.plain[reencrypt.Column{Table: "webhook_endpoints", Column: "previous_secret_sealed"}][ep.ID] = ep.Secret
	f.plain[reencrypt.Column{Table: "webhook_endpoints", Column: "headers_sealed"}][ep.ID] = "{}" // no custom headers: the empty set, sealed
}

func (f *fixture) intKey(t *testing.T, box *secrets.Box) {
	t.Helper()
	k, err := apikeys.NewService(f.db, box).CreateIntegrationKey(f.ctx, apikeys.NewIntegrationKey{OrgID: f.org, StoreID: f.store,
		ActorID: f.owner, Scopes: []string{"orders:write"}, RequireSignature: true})
	if err != nil {
		t.Fatal(err)
	}
	f.plain[reencrypt.Column{Table: "integration_keys", Column: "signing_secret_sealed"}][k.Key.ID] = k.SigningSecret
}

// openAll checks every stored secret opens under box to the value it was created with.
func (f *fixture) openAll(t *testing.T, box *secrets.Box) {
	t.Helper()
	for _, col := range reencrypt.Columns {
		for id, plain := range f.plain[col] {
			var sealed []byte
			if err := f.db.Raw("SELECT "+col.Column+" FROM "+col.Table+" WHERE id = ?", id).Row().Scan(&sealed); err != nil {
				t.Fatal(err)
			}
			got, err := box.Open(sealed)
			if err != nil || string(got) != plain {
				t.Errorf("%s %s does not open under the new key alone: %v", col.Table, id, err)
			}
		}
	}
}

func TestRunResealsEverySecretUnderTheNewKey(t *testing.T) {
	reencrypt.SetBatchSize(2) // several batches per table
	f := newFixture(t)
	oldKey := secrets.GenerateKey()
	oldBox, _ := secrets.NewBox(oldKey)
	newBox, _ := secrets.NewBox(secrets.GenerateKey())
	for range 5 {
		f.endpoint(t, oldBox)
	}
	for range 3 {
		f.intKey(t, oldBox)
	}
	f.endpoint(t, newBox) // made after the new key went live: already current
	// An integration key without signatures has nothing sealed and must be left alone.
	if _, err := apikeys.NewService(f.db, newBox).CreateIntegrationKey(f.ctx, apikeys.NewIntegrationKey{OrgID: f.org, StoreID: f.store,
		ActorID: f.owner, Scopes: []string{"orders:write"}}); err != nil {
		t.Fatal(err)
	}

	rotating, err := newBox.WithPrevious(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := reencrypt.Run(f.ctx, f.db, rotating)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{"secret_sealed": {5, 1}, "previous_secret_sealed": {5, 1}, "headers_sealed": {5, 1}, "signing_secret_sealed": {3, 0}, "headers": {0, 0}}
	for _, r := range res {
		if w := want[r.Column.Column]; r.Resealed != w[0] || r.Current != w[1] {
			t.Errorf("%s: resealed %d, current %d; want %v", r.Table, r.Resealed, r.Current, w)
		}
	}
	f.openAll(t, newBox)

	again, err := reencrypt.Run(f.ctx, f.db, rotating)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range again {
		if r.Resealed != 0 {
			t.Errorf("second run re-sealed %d values of %s", r.Resealed, r.Table)
		}
	}
}

func TestRunStopsOnAValueNoKeyOpens(t *testing.T) {
	f := newFixture(t)
	lostBox, _ := secrets.NewBox(secrets.GenerateKey())
	newBox, _ := secrets.NewBox(secrets.GenerateKey())
	f.endpoint(t, lostBox)
	var before []byte
	if err := f.db.Raw("SELECT secret_sealed FROM webhook_endpoints").Row().Scan(&before); err != nil {
		t.Fatal(err)
	}

	_, err := reencrypt.Run(f.ctx, f.db, newBox)
	if err == nil || !strings.Contains(err.Error(), "webhook_endpoints") || !strings.Contains(err.Error(), "WDS_ENCRYPTION_KEY_PREVIOUS") {
		t.Fatalf("err = %v, want the row and the fix named", err)
	}
	var after []byte
	if err := f.db.Raw("SELECT secret_sealed FROM webhook_endpoints").Row().Scan(&after); err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatal("an undecryptable value was overwritten")
	}
}

// Every column of the schema that holds sealed values must be in Columns, or a rotation would leave
// it behind. Sealed columns are named *_sealed by convention; this test holds the schema to it.
func TestColumnsCoverEverySealedColumnOfTheSchema(t *testing.T) {
	f := newFixture(t)
	var got []reencrypt.Column
	if err := f.db.Raw(`SELECT table_name AS table, column_name AS column FROM information_schema.columns
		WHERE table_schema = 'public' AND data_type = 'bytea' AND column_name LIKE '%sealed%' ORDER BY 1, 2`).Scan(&got).Error; err != nil {
		t.Fatal(err)
	}
	if len(got) != len(reencrypt.Columns) {
		t.Fatalf("schema has sealed columns %v, Columns has %v", got, reencrypt.Columns)
	}
	for _, c := range got {
		found := false
		for _, k := range reencrypt.Columns {
			found = found || k == c
		}
		if !found {
			t.Errorf("sealed column %s.%s is not re-encrypted", c.Table, c.Column)
		}
	}
}

// Header values written before they were sealed sit in plaintext in the headers column: reencrypt
// seals them (the column keeps the names, blank), and delivery reads them sealed from then on.
func TestRunSealsLegacyPlaintextHeaderValues(t *testing.T) {
	f := newFixture(t)
	box, _ := secrets.NewBox(secrets.GenerateKey())
	svc := endpoints.NewService(f.db, box, endpoints.Options{AllowPrivate: true})
	ep, err := svc.Create(f.ctx, endpoints.CreateInput{OrgID: f.org, ActorID: f.owner, URL: "https://127.0.0.1/hook", EventTypes: []string{"order.created"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.Exec(`UPDATE webhook_endpoints SET headers = '{"Authorization": "Bearer legacy"}', headers_sealed = NULL WHERE id = ?`, ep.ID).Error; err != nil {
		t.Fatal(err)
	}
	// Edited during a roll-out by a version that writes the plaintext column and leaves the sealed set.
	edited, err := svc.Create(f.ctx, endpoints.CreateInput{OrgID: f.org, ActorID: f.owner, URL: "https://127.0.0.1/edited", EventTypes: []string{"order.created"},
		Headers: map[string]string{"X-Old": "stale"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.Exec(`UPDATE webhook_endpoints SET headers = '{"X-New": "edited"}' WHERE id = ?`, edited.ID).Error; err != nil {
		t.Fatal(err)
	}
	res, err := reencrypt.Run(f.ctx, f.db, box)
	if err != nil {
		t.Fatal(err)
	}
	sealedLegacy := 0
	for _, r := range res {
		sealedLegacy += r.Sealed
	}
	if sealedLegacy != 2 {
		t.Fatalf("sealed %d legacy header sets, want 2: %+v", sealedLegacy, res)
	}
	var row models.Endpoint
	if err := f.db.Where("id = ?", ep.ID).Take(&row).Error; err != nil {
		t.Fatal(err)
	}
	if len(row.Headers) != 1 || row.Headers["Authorization"] != "" {
		t.Fatalf("the headers column still holds %v", row.Headers)
	}
	got, err := models.OpenHeaders(box, row.Headers, row.HeadersSealed)
	if err != nil || got["Authorization"] != "Bearer legacy" {
		t.Fatalf("the sealed headers open to %v, %v", got, err)
	}
	var rewritten models.Endpoint
	f.db.Where("id = ?", edited.ID).Take(&rewritten)
	if got, err := models.OpenHeaders(box, rewritten.Headers, rewritten.HeadersSealed); err != nil || len(got) != 1 || got["X-New"] != "edited" ||
		rewritten.Headers["X-New"] != "" {
		t.Fatalf("the edited set reads %v (column %v), %v", got, rewritten.Headers, err)
	}
	if again, _ := reencrypt.Run(f.ctx, f.db, box); again[len(again)-1].Sealed != 0 {
		t.Fatalf("a second run sealed again: %+v", again)
	}
}
