package apikeys_test

import (
	"context"
	"testing"
	"time"

	"wds/internal/apikeys"
	"wds/internal/platform/paging"
	"wds/internal/platform/ratelimit"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/deliverytest"
	"wds/test/pgtest"
)

// The Operator API's key lists and audit log take the org's turns at its reads, as its delivery logs
// do (internal/deliverylog's TestAnOrgsReadsArePacedApartFromOtherOrgs): an org reading them in a loop
// gets ten turns at once and the rest at the pace, one read at a time, while another org's read,
// asked meanwhile, answers without waiting behind them.
func TestKeyListsAndTheAuditLogArePacedPerOrg(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	people := workspace.NewService(db)
	owner := func(name string) paging.OrgQuery {
		org, err := people.CreateOrg(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		u, _, err := people.CreateUser(ctx, org.ID, "owner@"+org.ID.String()+".test", models.RoleOwner)
		if err != nil {
			t.Fatal(err)
		}
		return paging.OrgQuery{OrgID: org.ID, ActorID: u.ID, Limit: 50}
	}
	busy, quiet := owner("Busy"), owner("Quiet")
	reads := ratelimit.NewPacer(10, 500*time.Millisecond, nil)
	keys, audit := apikeys.NewKeyLists(db, reads), workspace.NewAuditLog(db, reads)
	read := []func(q paging.OrgQuery) error{
		func(q paging.OrgQuery) error { _, err := keys.ListReadKeys(ctx, q); return err },
		func(q paging.OrgQuery) error { _, err := keys.ListIntegrationKeys(ctx, q); return err },
		func(q paging.OrgQuery) error { _, err := audit.ListAudit(ctx, q); return err },
	}
	deliverytest.CheckPacedApart(t, false, func(i int) error { return read[i%len(read)](busy) },
		func() error { return read[2](quiet) })
}
