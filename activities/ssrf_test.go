package activities_test

import (
	"net/url"
	"testing"

	"github.com/google/uuid"

	"wds/activities"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/platform/egress"
	"wds/internal/platform/egress/egresstest"
	"wds/models"
	"wds/test/deliverytest"
)

// DNS rebinding: an endpoint registered while its name resolved to a public address is delivered to
// after the name was re-pointed at an internal one. The guard refuses the connection (the attempt
// is recorded as address_not_allowed) and the receiver listening there gets nothing. The test
// certificate covers *.example.com, so without the guard the POST would arrive.
func TestDeliveryRefusesANameRepointedAtAnInternalAddress(t *testing.T) {
	for _, internal := range []string{"127.0.0.1", "::ffff:127.0.0.1", "169.254.169.254"} {
		t.Run(internal, func(t *testing.T) {
			f := newFixture(t)
			rc := deliverytest.NewReceiver(t, nil)
			u, _ := url.Parse(rc.Srv.URL)
			const host = "rebind.example.com"
			dns := &egresstest.Resolver{}
			dns.Set(host, "93.184.216.34")
			strict := endpoints.NewService(f.DB, f.Box, endpoints.Options{Resolver: dns})
			ep, err := strict.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner,
				URL: "https://" + host + ":" + u.Port() + "/hook", EventTypes: []string{events.OrderCreated}})
			if err != nil {
				t.Fatalf("registering while %s resolves public: %v", host, err)
			}

			dns.Set(host, internal)
			c, err := egress.NewClient(egress.Options{RootCAs: rc.Roots(), Resolver: dns})
			if err != nil {
				t.Fatal(err)
			}
			a := &activities.Activities{DB: f.DB, Box: f.Box, HTTP: c}
			asked := dns.Asked(host)
			in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
			res, err := a.Deliver(f.Ctx, in)
			if err != nil || res.Outcome != models.StatusFailed || res.Error != "address_not_allowed" {
				t.Fatalf("deliver: %+v %v", res, err)
			}
			if dns.Asked(host) == asked {
				t.Fatal("the delivery did not resolve the name again")
			}
			rows := f.Rows(in.ChainID)
			if len(rows) != 1 || rows[0].Status != models.StatusFailed || rows[0].Error != "address_not_allowed" ||
				rows[0].ResponseStatus != nil || rows[0].NextAttemptAt == nil {
				t.Fatalf("recorded %+v", rows)
			}
			if n := len(rc.Got()); n != 0 {
				t.Fatalf("the receiver got %d requests", n)
			}
			if internal == "169.254.169.254" {
				return
			}
			// Control: the same resolver without the guard reaches the receiver, so what stopped the
			// attempt above was the guard and nothing else (TLS, the name, the port).
			open, err := egress.NewClient(egress.Options{RootCAs: rc.Roots(), Resolver: dns, AllowPrivate: true})
			if err != nil {
				t.Fatal(err)
			}
			a.HTTP = open
			next := in
			next.DeliveryID, next.Attempt = uuid.New(), 2
			if res, err := a.Deliver(f.Ctx, next); err != nil || res.Outcome != models.StatusSucceeded || len(rc.Got()) != 1 {
				t.Fatalf("control without the guard: %+v %v, %d requests", res, err, len(rc.Got()))
			}
		})
	}
}
