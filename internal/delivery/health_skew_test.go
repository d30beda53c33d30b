package delivery_test

import (
	"testing"
	"time"

	"wds/internal/events"
	"wds/models"
)

// A busy endpoint's row is not written on every success: one within a second of the last success
// recorded, while no failure streak runs, leaves last_success_at (and the row) as it was, and one a
// second later moves it. A success after a failure always ends the streak.
func TestSuccessesWithinASecondWriteTheEndpointOnce(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	ev := f.Event(events.OrderCreated, nil)
	base := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
	row := func() (lastSuccess, failingSince *time.Time, versions string) {
		t.Helper()
		var r struct {
			LastSuccessAt, FailingSince *time.Time
			Ctid                        string
		}
		if err := f.DB.Raw(`SELECT last_success_at, failing_since, ctid::text AS ctid FROM webhook_endpoints WHERE id = ?`, ep.ID).Scan(&r).Error; err != nil {
			t.Fatal(err)
		}
		return r.LastSuccessAt, r.FailingSince, r.Ctid
	}
	f.Delivery(ev, ep.ID, 1, models.StatusSucceeded, base)
	_, _, first := row()
	f.Delivery(ev, ep.ID, 1, models.StatusSucceeded, base.Add(900*time.Millisecond))
	if last, _, version := row(); !last.Equal(base) || version != first {
		t.Fatalf("a success 0.9 s later: last success %v (want %v), row %s (was %s)", last, base, version, first)
	}
	f.Delivery(ev, ep.ID, 1, models.StatusSucceeded, base.Add(1100*time.Millisecond))
	if last, _, _ := row(); !last.Equal(base.Add(1100 * time.Millisecond)) {
		t.Fatalf("a success 1.1 s later left last success at %v", last)
	}
	f.Delivery(ev, ep.ID, 1, models.StatusFailed, base.Add(1200*time.Millisecond))
	if _, failing, _ := row(); failing == nil {
		t.Fatal("a failure after the last success started no streak")
	}
	f.Delivery(ev, ep.ID, 1, models.StatusSucceeded, base.Add(1300*time.Millisecond))
	if last, failing, _ := row(); failing != nil || !last.Equal(base.Add(1300*time.Millisecond)) {
		t.Fatalf("a success within the second after a failure: last success %v, failing since %v", last, failing)
	}
}
