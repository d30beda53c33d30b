package ingest

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

// TestAClientWhoseEmailChangesMidCreateIsNotLost drives the race createClient retries for: the
// insert sees the store's client with the email and skips, then a concurrent update (which holds
// the new email's lock, not this one's) moves that client to another email before the adoption
// looks for it. Nothing matches any more, so the create must insert, not fail as not found.
func TestAClientWhoseEmailChangesMidCreateIsNotLost(t *testing.T) {
	ctx := context.Background()
	db := pgtest.New(t)
	org, _ := workspace.NewService(db).CreateOrg(ctx, "Acme")
	store, _ := workspace.NewService(db).CreateStore(ctx, org.ID, "Shop", "USD")
	owner, _, _ := workspace.NewService(db).CreateUser(ctx, org.ID, uuid.NewString()+"@example.com", models.RoleOwner)
	key := &models.IntegrationKey{ID: uuid.New(), OrgID: org.ID, StoreID: store.ID, Label: "Shop", KeyHash: []byte(uuid.NewString()),
		KeyHint: "test", PayloadFormat: "generic", Scopes: models.IntegrationScopes, IPAllowlist: []string{}, RateLimit: 600, CreatedBy: owner.ID}
	if err := db.Create(key).Error; err != nil {
		t.Fatal(err)
	}
	email := "moving@example.com"
	first, err := NewService(db, nil).UpsertClient(ctx, key, Client{ExternalID: "c-1", Email: &email})
	if err != nil {
		t.Fatal(err)
	}
	in := Client{ExternalID: "c-2", Email: &email}
	if err := in.normalize("", true); err != nil {
		t.Fatal(err)
	}
	tx := db.Begin()
	defer tx.Rollback()
	o := keyOp(ctx, tx, key)
	if created, err := o.insertClient(in); err != nil || created != nil {
		t.Fatalf("insert over a matching email: %+v, %v", created, err)
	}
	if err := db.Exec(`UPDATE clients SET email = 'moved@example.com' WHERE id = ?`, first.ID).Error; err != nil {
		t.Fatal(err)
	}
	if _, found, err := o.existingClient(in); found || err != nil {
		t.Fatalf("existing client after the move: found %v, %v", found, err)
	}
	r, err := o.createClient(in)
	if err != nil || !r.created || r.id == first.ID {
		t.Fatalf("create after the move: %+v, %v", r, err)
	}
}
