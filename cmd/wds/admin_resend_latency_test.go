package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/dev/temporaldev"
	"wds/internal/dispatch"
	"wds/internal/events"
	"wds/internal/platform/database"
	"wds/internal/platform/secrets"
	"wds/test/deliverytest"
	"wds/test/pgtest"
)

// cliStartBound is how soon a resend or re-fire made with `wds admin` must reach its receiver: well
// inside the relay's grace, which decided it before the CLI announced its starts to the workers.
const cliStartBound = 2 * time.Second

// A resend and a re-fire made with `wds admin`, which has no Temporal client, reach the receiver as
// soon as one made through the Operator API: the running `wds worker` hears them announced and starts
// them at once, instead of its relay after dispatch.RelayGrace.
func TestACLIResendAndRefireArriveAsFastAsTheAPIs(t *testing.T) {
	if cliStartBound >= dispatch.RelayGrace {
		t.Fatalf("the bound %v does not tell an announced start from the relay's (%v)", cliStartBound, dispatch.RelayGrace)
	}
	srv, err := temporaldev.Start(context.Background(), temporaldev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	url, key := pgtest.URL(t), secrets.GenerateKey()
	t.Setenv("DATABASE_URL", url)
	t.Setenv("WDS_ENCRYPTION_KEY", key)
	t.Setenv("WDS_WEBHOOK_ALLOW_PRIVATE", "true")
	rc := newFlakyReceiver(t)
	w := startWDS(t, []string{"DATABASE_URL=" + url, "WDS_ENCRYPTION_KEY=" + key, "TEMPORAL_ADDRESS=" + srv.Address,
		"WDS_WEBHOOK_ALLOW_PRIVATE=true", "WDS_WEBHOOK_CA_FILE=" + rc.caFile(t), "WDS_LOG_LEVEL=warn", "WDS_METRICS_ADDR=" + freeAddr(t)}, "worker")
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	org := mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	actor := mustAdmin(t, "user", "create", "--org", org, "--email", "support@acme.example", "--role", "owner")["id"].(string)
	mustAdmin(t, "endpoint", "create", "--org", org, "--actor", actor, "--url", rc.srv.URL+"/hooks", "--events", "order.created", "--max-attempts", "1")
	arrivals := func(ev uuid.UUID, n int, within time.Duration) time.Time {
		t.Helper()
		deadline := time.Now().Add(within)
		for len(rc.received(ev)) < n {
			select {
			case <-w.exited:
				t.Fatalf("wds worker exited: %v\n%s", w.err, w.out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("event %s arrived %d times within %v, want %d", ev, len(rc.received(ev)), within, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return rc.received(ev)[n-1]
	}

	ev, err := deliverytest.Emit(context.Background(), db, uuid.MustParse(org), nil, events.OrderCreated, map[string]any{"id": uuid.New()})
	if err != nil {
		t.Fatal(err)
	}
	arrivals(ev, 1, 30*time.Second) // the relay starts it: the event was not written by a process with a starter
	// The receipt comes before the attempt's row: a resend before it finds the chain in progress.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var outcome string
		if err := db.Raw("SELECT outcome FROM event_states WHERE event_id = ?", ev).Scan(&outcome).Error; err != nil {
			t.Fatal(err)
		}
		if outcome == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("event %s still %q 10 s after its receipt", ev, outcome)
		}
	}
	start := time.Now()
	mustAdmin(t, "event", "resend", "--id", ev.String(), "--actor", actor)
	resent := arrivals(ev, 2, 10*time.Second).Sub(start)
	t.Logf("wds admin event resend to receipt: %v", resent.Round(time.Millisecond))

	rc.setDown(true) // the next event's only attempt fails: its chain drops
	lost, _ := deliverytest.Emit(context.Background(), db, uuid.MustParse(org), nil, events.OrderCreated, map[string]any{"id": uuid.New()})
	var dropped string
	for deadline := time.Now().Add(30 * time.Second); dropped == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the failing event's chain did not drop")
		}
		db.Raw(`SELECT id::text FROM webhook_deliveries WHERE event_id = ? AND status = 'dropped'`, lost).Scan(&dropped)
	}
	rc.setDown(false)
	start = time.Now()
	mustAdmin(t, "delivery", "refire", "--id", dropped, "--actor", actor)
	refired := arrivals(lost, 1, 10*time.Second).Sub(start)
	t.Logf("wds admin delivery refire to receipt: %v", refired.Round(time.Millisecond))
	if resent > cliStartBound || refired > cliStartBound {
		t.Fatalf("resend arrived after %v, re-fire after %v; want both within %v", resent, refired, cliStartBound)
	}
}
