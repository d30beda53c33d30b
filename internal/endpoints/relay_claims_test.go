package endpoints_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/dispatch"
	"wds/internal/events"
	"wds/test/deliverytest"
)

// The relay skips what another relay holds, and only while it holds it: an unexpired claim naming
// the event (relay_claims), or the lease a previous release's relay wrote on the row itself; a claim
// whose relay died runs out and the event is started. A claim the relay makes ends with its mark,
// and the event's row keeps no lease.
func TestTheRelaySkipsClaimedAndLeasedEventsUntilTheyRunOut(t *testing.T) {
	f := newFixture(t)
	f.subscribe()
	tc := &fakeTemporal{starts: map[string]int{}}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet()}
	relay := func(step string, want int) {
		t.Helper()
		if n, err := st.RelayOnce(f.Ctx, 10); err != nil || n != want {
			t.Fatalf("%s: the relay started %d (%v), want %d", step, n, err, want)
		}
	}
	claimed, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	leased, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	claim := uuid.New()
	f.DB.Exec(`INSERT INTO relay_claims (id, source, row_ids, until) VALUES (?, 'events', ARRAY[?]::uuid[], clock_timestamp() + interval '1 minute')`,
		claim, claimed)
	f.DB.Exec(`UPDATE events SET relay_lease_until = clock_timestamp() + interval '1 minute' WHERE id = ?`, leased)
	relay("claimed and leased", 0)
	f.DB.Exec(`UPDATE relay_claims SET until = clock_timestamp() - interval '1 second' WHERE id = ?`, claim)
	f.DB.Exec(`UPDATE events SET relay_lease_until = clock_timestamp() - interval '1 second' WHERE id = ?`, leased)
	relay("both run out", 2)
	tc.startedOnce(t, []uuid.UUID{claimed, leased})
	var left struct{ Claims, Leases int64 }
	f.DB.Raw(`SELECT (SELECT count(*) FROM relay_claims) AS claims,
		(SELECT count(*) FROM events WHERE relay_lease_until > clock_timestamp()) AS leases`).Scan(&left)
	if left.Claims != 0 || left.Leases != 0 || f.undispatched() != 0 {
		t.Fatalf("after the relay's pass: %d claims, %d leases, %d undispatched", left.Claims, left.Leases, f.undispatched())
	}
}
