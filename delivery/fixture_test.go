package delivery_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/delivery"
	"wds/internal/dev/pgtest"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
)

// Every test of the package that needs PostgreSQL clones the template database pgtest migrates once.
func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is an org with an owner and a member, and the endpoint service over a fresh database.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	db     *gorm.DB
	box    *secrets.Box
	svc    *delivery.Service
	org    uuid.UUID
	owner  uuid.UUID
	member uuid.UUID
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	box, err := secrets.NewBox(secrets.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	org, err := workspace.NewService(db).CreateOrg(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := workspace.NewService(db).CreateUser(ctx, org.ID, "owner@acme.test", workspace.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	member, _, err := workspace.NewService(db).CreateUser(ctx, org.ID, "member@acme.test", workspace.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, db: db, box: box, svc: &delivery.Service{DB: db, Box: box, AllowPrivate: true},
		org: org.ID, owner: owner.ID, member: member.ID}
}
