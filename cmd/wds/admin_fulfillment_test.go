package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wds/test/pgtest"
)

// wds admin order ship, shipment track and shipment deliver print the shipment and emit what the
// Operator API emits; a repeat emits nothing; refusals carry the API's codes.
func TestAdminShipsTracksAndDelivers(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	org, store, member, _ := appWorkspace(t)
	file := filepath.Join(t.TempDir(), "order.json")
	if err := os.WriteFile(file, []byte(`{"lines": [{"description": "Mug", "quantity": 1, "unit_price_cents": 900}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	order := mustAdmin(t, "order", "create", "--org", org, "--store", store, "--actor", member, "--file", file)["id"].(string)
	_, err := admin(t, "order", "ship", "--id", order, "--actor", member)
	wantCode(t, err, "invalid_parameter") // --carrier is required
	s := mustAdmin(t, "order", "ship", "--id", order, "--actor", member, "--carrier", "UPS")
	if s["status"] != "shipped" || s["tracking_number"] != nil {
		t.Fatalf("ship printed %v", s)
	}
	id := s["id"].(string)
	if got := mustAdmin(t, "shipment", "track", "--id", id, "--actor", member, "--tracking", "1Z1"); got["tracking_number"] != "1Z1" {
		t.Fatalf("track printed %v", got)
	}
	mustAdmin(t, "shipment", "track", "--id", id, "--actor", member, "--tracking", "1Z1")
	if got := mustAdmin(t, "shipment", "deliver", "--id", id, "--actor", member); got["status"] != "delivered" || got["delivered_at"] == nil {
		t.Fatalf("deliver printed %v", got)
	}
	mustAdmin(t, "shipment", "deliver", "--id", id, "--actor", member)
	_, err = admin(t, "shipment", "deliver", "--id", id, "--actor", member, "--delivered-at", "soon")
	wantCode(t, err, "invalid_parameter")
	got := strings.Join(eventTypesAt(t, url), ",")
	if want := "order.created,order.shipped,shipment.tracking_added,order.delivered"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
}

// order ship takes the order's number as event list --order does: with --org, since numbers are per
// org; without it, or for a number the org has not, it says so and ships nothing.
func TestAdminShipsAnOrderByItsNumber(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	org, store, member, _ := appWorkspace(t)
	file := filepath.Join(t.TempDir(), "order.json")
	if err := os.WriteFile(file, []byte(`{"lines": [{"description": "Mug", "quantity": 1, "unit_price_cents": 900}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	created := mustAdmin(t, "order", "create", "--org", org, "--store", store, "--actor", member, "--file", file)
	number := created["number"].(string)
	_, err := admin(t, "order", "ship", "--id", number, "--actor", member, "--carrier", "UPS")
	wantCode(t, err, "invalid_parameter")
	if !strings.Contains(err.Error(), "give --org too") {
		t.Errorf("a number without --org: %v", err)
	}
	_, err = admin(t, "order", "ship", "--id", "9999", "--org", org, "--actor", member, "--carrier", "UPS")
	wantCode(t, err, "not_found")
	if !strings.Contains(err.Error(), "no order 9999") {
		t.Errorf("an unknown number: %v", err)
	}
	if got := strings.Join(eventTypesAt(t, url), ","); got != "order.created" {
		t.Fatalf("a refused ship emitted %s", got)
	}
	s := mustAdmin(t, "order", "ship", "--id", "#"+number, "--org", org, "--actor", member, "--carrier", "UPS")
	if s["order_id"] != created["id"] || s["status"] != "shipped" {
		t.Fatalf("ship by number printed %v for order %v", s, created["id"])
	}
}
