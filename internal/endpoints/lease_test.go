package endpoints_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/platform/problem"
	"wds/models"
	"wds/worker"
)

// An endpoint on a lease (wds listen's) that is not renewed ends by itself: past its lease it no
// longer takes one of the org's ten slots, and the next prune deletes it. A renewed lease keeps it.
// The first of the two that finds it ended deletes it as of its lease's end, with an audit row of no
// actor (the service did it), so the org never holds more than ten enabled endpoints, not even
// while the ended lease waits for the prune.
func TestAnEndpointWhoseLeaseEndedFreesItsSlotAndIsDeleted(t *testing.T) {
	f := newFixture(t)
	crashed, _ := f.Create("https://127.0.0.1/crashed?token=lease-secret")
	alive, _ := f.Create("https://127.0.0.1/alive")
	if err := f.Svc.Renew(f.Ctx, crashed.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Renew(f.Ctx, alive.ID); err != nil {
		t.Fatal(err)
	}
	var left float64
	f.DB.Raw(`SELECT extract(epoch FROM lease_until - now()) FROM webhook_endpoints WHERE id = ?`, alive.ID).Scan(&left)
	if d := time.Duration(left) * time.Second; d < endpoints.LeaseTTL-time.Minute || d > endpoints.LeaseTTL+time.Minute {
		t.Fatalf("a renewed lease ends in %v, want %v", d, endpoints.LeaseTTL)
	}
	for i := 2; i < endpoints.MaxEnabledPerOrg; i++ {
		if _, err := f.Create("https://127.0.0.1/more"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Create("https://127.0.0.1/eleventh"); !errors.Is(err, endpoints.ErrEndpointLimit) {
		t.Fatalf("an eleventh endpoint while every lease runs: %v", err)
	}
	f.DB.Exec(`UPDATE webhook_endpoints SET lease_until = now() - interval '1 second' WHERE id = ?`, crashed.ID)
	if _, err := f.Create("https://127.0.0.1/eleventh"); err != nil {
		t.Fatalf("the crashed listener's endpoint still takes a slot: %v", err)
	}
	if n := f.enabled(); n != endpoints.MaxEnabledPerOrg {
		t.Fatalf("%d enabled endpoints once the eleventh took the ended lease's slot, want %d", n, endpoints.MaxEnabledPerOrg)
	}
	f.wantLeaseEnded(crashed.ID, "https://127.0.0.1/crashed")

	// Disabled, then its lease ended: enabling it finds it gone, takes no slot and changes nothing.
	if _, err := f.Svc.Disable(f.Ctx, alive.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	f.DB.Exec(`UPDATE webhook_endpoints SET lease_until = now() - interval '1 second' WHERE id = ?`, alive.ID)
	if _, err := f.Svc.Enable(f.Ctx, alive.ID, f.Owner); !errors.Is(err, problem.NotFound) {
		t.Fatalf("enabling an endpoint whose lease ended: %v, want not found", err)
	}
	if n := f.enabled(); n != endpoints.MaxEnabledPerOrg-1 {
		t.Fatalf("%d enabled endpoints after the refused enable, want %d", n, endpoints.MaxEnabledPerOrg-1)
	}

	// The prune deletes what nobody else found ended, audited the same way.
	late, _ := f.Create("https://127.0.0.1/late")
	if err := f.Svc.Renew(f.Ctx, late.ID); err != nil {
		t.Fatal(err)
	}
	f.DB.Exec(`UPDATE webhook_endpoints SET lease_until = now() - interval '1 second' WHERE id = ?`, late.ID)
	p, err := worker.Prune(f.Ctx, f.DB, time.Time{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if p.Expired != 1 { // late's; alive's ended lease went with late's create
		t.Fatalf("pruned %+v, want one expired endpoint", p)
	}
	f.wantLeaseEnded(late.ID, "https://127.0.0.1/late")
	f.wantLeaseEnded(alive.ID, "https://127.0.0.1/alive")
	if p, err = worker.Prune(f.Ctx, f.DB, time.Time{}, 1000); err != nil || p.Expired != 0 {
		t.Fatalf("a second prune: %+v %v", p, err)
	}
	for _, id := range []uuid.UUID{crashed.ID, alive.ID, late.ID} {
		if err := f.Svc.Renew(f.Ctx, id); err == nil {
			t.Fatal("renewed the lease of a deleted endpoint")
		}
	}
}

// enabled counts the org's enabled endpoints not deleted.
func (f *fixture) enabled() int64 {
	var n int64
	f.DB.Model(&models.Endpoint{}).Where("org_id = ? AND enabled AND deleted_at IS NULL", f.Org).Count(&n)
	return n
}

// wantLeaseEnded checks the endpoint was deleted as of its lease's end, with one audit row of no
// actor that shows its URL redacted.
func (f *fixture) wantLeaseEnded(id uuid.UUID, redacted string) {
	f.T.Helper()
	var ep models.Endpoint
	f.DB.Take(&ep, "id = ?", id)
	if ep.DeletedAt == nil || ep.Enabled || ep.LeaseUntil == nil || !ep.DeletedAt.Equal(*ep.LeaseUntil) {
		f.T.Fatalf("endpoint %s: enabled %v, deleted at %v, lease until %v; want deleted as of its lease's end", id, ep.Enabled, ep.DeletedAt, ep.LeaseUntil)
	}
	var audit []struct {
		OrgID   uuid.UUID
		ActorID *uuid.UUID
		Action  string
		Target  string
		URL     string
	}
	f.DB.Raw(`SELECT org_id, actor_id, action, target_type AS target, details->>'url' AS url FROM audit_log WHERE target_id = ?
		AND action NOT LIKE 'webhook_endpoint.%'`, id).Scan(&audit)
	if len(audit) != 1 || audit[0].ActorID != nil || audit[0].Action != "endpoint.lease_ended" || audit[0].Target != "webhook_endpoint" ||
		audit[0].OrgID != f.Org || audit[0].URL != redacted {
		f.T.Fatalf("endpoint %s: audit %+v, want one endpoint.lease_ended of no actor", id, audit)
	}
}
