package delivery_test

import (
	"net/url"
	"testing"

	"github.com/google/uuid"

	"wds/delivery"
	"wds/internal/events"
	"wds/internal/platform/egress"
	"wds/internal/platform/egress/egresstest"
)

// DNS rebinding: an endpoint registered while its name resolved to a public address is delivered to
// after the name was re-pointed at an internal one. The guard refuses the connection (the attempt
// is recorded as address_not_allowed) and the receiver listening there gets nothing. The test
// certificate covers *.example.com, so without the guard the POST would arrive.
func TestDeliveryRefusesANameRepointedAtAnInternalAddress(t *testing.T) {
	for _, internal := range []string{"127.0.0.1", "::ffff:127.0.0.1", "169.254.169.254"} {
		t.Run(internal, func(t *testing.T) {
			f := newFixture(t)
			rc := newReceiver(t, nil)
			u, _ := url.Parse(rc.srv.URL)
			const host = "rebind.example.com"
			dns := &egresstest.Resolver{}
			dns.Set(host, "93.184.216.34")
			strict := &delivery.Service{DB: f.db, Box: f.box, Resolver: dns}
			ep, err := strict.Create(f.ctx, delivery.CreateInput{OrgID: f.org, ActorID: f.owner,
				URL: "https://" + host + ":" + u.Port() + "/hook", EventTypes: []string{events.OrderCreated}})
			if err != nil {
				t.Fatalf("registering while %s resolves public: %v", host, err)
			}

			dns.Set(host, internal)
			c, err := egress.NewClient(egress.Options{RootCAs: rc.roots(), Resolver: dns})
			if err != nil {
				t.Fatal(err)
			}
			a := &delivery.Activities{DB: f.db, Box: f.box, HTTP: c}
			asked := dns.Asked(host)
			in := attempt(f.event(events.OrderCreated, nil), ep.ID, 1, later())
			res, err := a.Deliver(f.ctx, in)
			if err != nil || res.Outcome != delivery.StatusFailed || res.Error != "address_not_allowed" {
				t.Fatalf("deliver: %+v %v", res, err)
			}
			if dns.Asked(host) == asked {
				t.Fatal("the delivery did not resolve the name again")
			}
			rows := f.rows(in.ChainID)
			if len(rows) != 1 || rows[0].Status != delivery.StatusFailed || rows[0].Error != "address_not_allowed" ||
				rows[0].ResponseStatus != nil || rows[0].NextAttemptAt == nil {
				t.Fatalf("recorded %+v", rows)
			}
			if n := len(rc.got()); n != 0 {
				t.Fatalf("the receiver got %d requests", n)
			}
			if internal == "169.254.169.254" {
				return
			}
			// Control: the same resolver without the guard reaches the receiver, so what stopped the
			// attempt above was the guard and nothing else (TLS, the name, the port).
			open, err := egress.NewClient(egress.Options{RootCAs: rc.roots(), Resolver: dns, AllowPrivate: true})
			if err != nil {
				t.Fatal(err)
			}
			a.HTTP = open
			next := in
			next.DeliveryID, next.Attempt = uuid.New(), 2
			if res, err := a.Deliver(f.ctx, next); err != nil || res.Outcome != delivery.StatusSucceeded || len(rc.got()) != 1 {
				t.Fatalf("control without the guard: %+v %v, %d requests", res, err, len(rc.got()))
			}
		})
	}
}
