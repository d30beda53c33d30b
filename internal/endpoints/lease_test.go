package endpoints_test

import (
	"errors"
	"testing"
	"time"

	"wds/internal/endpoints"
	"wds/models"
	"wds/worker"
)

// An endpoint on a lease (wds listen's) that is not renewed ends by itself: past its lease it no
// longer takes one of the org's ten slots, and the next prune deletes it. A renewed lease keeps it.
func TestAnEndpointWhoseLeaseEndedFreesItsSlotAndIsDeleted(t *testing.T) {
	f := newFixture(t)
	crashed, _ := f.Create("https://127.0.0.1/crashed")
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
	p, err := worker.Prune(f.Ctx, f.DB, time.Time{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if p.Expired != 1 {
		t.Fatalf("pruned %+v, want one expired endpoint", p)
	}
	for id, deleted := range map[any]bool{crashed.ID: true, alive.ID: false} {
		var ep models.Endpoint
		f.DB.Take(&ep, "id = ?", id)
		if (ep.DeletedAt != nil) != deleted || ep.Enabled == deleted {
			t.Errorf("endpoint %v: deleted %v enabled %v, want deleted %v", id, ep.DeletedAt, ep.Enabled, deleted)
		}
	}
	if err := f.Svc.Renew(f.Ctx, crashed.ID); err == nil {
		t.Fatal("renewed the lease of a deleted endpoint")
	}
}
