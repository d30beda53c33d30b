package fulfillment_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/events/eventstest"
	"wds/internal/fulfillment"
	"wds/internal/ingest"
	"wds/internal/order"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type fixture struct {
	t                *testing.T
	ctx              context.Context
	db               *gorm.DB
	org, store       uuid.UUID
	member, outsider uuid.UUID
	seen             int // events already returned by emitted
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	org, _ := workspace.NewService(db).CreateOrg(ctx, "Acme")
	store, _ := workspace.NewService(db).CreateStore(ctx, org.ID, "Main", "USD")
	member, _, err := workspace.NewService(db).CreateUser(ctx, org.ID, "m@acme.test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := workspace.NewService(db).CreateOrg(ctx, "Other")
	outsider, _, _ := workspace.NewService(db).CreateUser(ctx, other.ID, "o@other.test", models.RoleOwner)
	return &fixture{t: t, ctx: ctx, db: db, org: org.ID, store: store.ID, member: member.ID, outsider: outsider.ID}
}

// order creates an invoiced app order.
func (f *fixture) order() uuid.UUID {
	f.t.Helper()
	store := f.store.String()
	res, err := ingest.NewService(f.db, nil).CreateAppOrder(f.ctx, f.org, f.member, ingest.AppOrder{StoreID: &store, Order: ingest.Order{
		Lines: []ingest.Line{{Description: "Mug", Quantity: 1, UnitPriceCents: 1500}}}})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.ID
}

// emitted returns the types of the events written since the last call, each body validated.
func (f *fixture) emitted() []string {
	f.t.Helper()
	all := eventstest.Written(f.t, f.db)
	defer func() { f.seen = len(all) }()
	return all[f.seen:]
}

func (f *fixture) audits() int64 {
	var n int64
	f.db.Model(&models.AuditEntry{}).Where("org_id = ? AND target_type = 'shipment'", f.org).Count(&n)
	return n
}

func (f *fixture) orderView(id uuid.UUID) *order.Order {
	o, err := order.Get(f.ctx, f.db, paging.Scope{OrgID: f.org}, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return o
}

func ptr[T any](v T) *T { return &v }

func want(t *testing.T, what string, got []string, expected ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(expected, ",") {
		t.Errorf("%s emitted %v, want %v", what, got, expected)
	}
}

func TestAnOrderShipsAndIsDeliveredWhenEveryShipmentArrived(t *testing.T) {
	f := newFixture(t)
	id := f.order()
	f.emitted()
	first, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.member, id, fulfillment.Ship{Carrier: " UPS "})
	if err != nil {
		t.Fatal(err)
	}
	want(t, "the first shipment", f.emitted(), events.OrderShipped)
	if first.Carrier != "UPS" || first.Status != "shipped" || first.TrackingNumber != nil {
		t.Fatalf("shipment %+v", first)
	}
	if o := f.orderView(id); o.FulfillmentStatus != order.Shipped {
		t.Fatalf("order %s", o.FulfillmentStatus)
	}
	shippedAt := time.Now().Add(-time.Hour)
	second, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.member, id, fulfillment.Ship{Carrier: "DHL", TrackingNumber: ptr("JD01"), ShippedAt: &shippedAt})
	if err != nil {
		t.Fatal(err)
	}
	want(t, "a second shipment with tracking", f.emitted(), events.ShipmentTrackingAdded)

	if _, err := fulfillment.NewService(f.db, nil).MarkDelivered(f.ctx, f.member, first.ID, nil); err != nil {
		t.Fatal(err)
	}
	want(t, "the first delivery of two", f.emitted())
	if o := f.orderView(id); o.FulfillmentStatus != order.Shipped {
		t.Fatalf("order %s after one of two deliveries", o.FulfillmentStatus)
	}
	at := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
	got, err := fulfillment.NewService(f.db, nil).MarkDelivered(f.ctx, f.member, second.ID, &at)
	if err != nil {
		t.Fatal(err)
	}
	want(t, "the last delivery", f.emitted(), events.OrderDelivered)
	if o := f.orderView(id); o.FulfillmentStatus != order.Delivered || got.DeliveredAt == nil || !got.DeliveredAt.Equal(at) {
		t.Fatalf("order %s, shipment %+v", o.FulfillmentStatus, got)
	}
	audits := f.audits()
	if _, err := fulfillment.NewService(f.db, nil).MarkDelivered(f.ctx, f.member, second.ID, nil); err != nil {
		t.Fatal(err)
	}
	want(t, "a second delivered", f.emitted())
	if f.audits() != audits {
		t.Error("a no-op wrote an audit row")
	}
	// A delivered order that ships again goes back to shipped, without a second order.shipped.
	if _, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.member, id, fulfillment.Ship{Carrier: "UPS"}); err != nil {
		t.Fatal(err)
	}
	want(t, "shipping a delivered order again", f.emitted())
	if o := f.orderView(id); o.FulfillmentStatus != order.Shipped || len(mustShipments(t, o)) != 3 {
		t.Fatalf("order %s", o.FulfillmentStatus)
	}
}

func mustShipments(t *testing.T, o *order.Order) []order.Shipment {
	ss, err := o.ShipmentList()
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func TestTrackingIsAnnouncedOnlyWhenTheNumberIsNew(t *testing.T) {
	f := newFixture(t)
	id := f.order()
	s, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.member, id, fulfillment.Ship{Carrier: "UPS"})
	if err != nil {
		t.Fatal(err)
	}
	f.emitted()
	before := f.orderView(id).UpdatedAt
	if _, err := fulfillment.NewService(f.db, nil).AddTracking(f.ctx, f.member, s.ID, "1Z1", nil); err != nil {
		t.Fatal(err)
	}
	want(t, "a new number", f.emitted(), events.ShipmentTrackingAdded)
	after := f.orderView(id)
	if !after.UpdatedAt.After(before) {
		t.Error("adding tracking did not advance the order's updated_at")
	}
	audits := f.audits()
	got, err := fulfillment.NewService(f.db, nil).AddTracking(f.ctx, f.member, s.ID, " 1Z1 ", nil)
	if err != nil || *got.TrackingNumber != "1Z1" {
		t.Fatalf("%+v %v", got, err)
	}
	want(t, "the same number again", f.emitted())
	if f.audits() != audits || !f.orderView(id).UpdatedAt.Equal(after.UpdatedAt) {
		t.Error("the same number again changed something")
	}
	if _, err := fulfillment.NewService(f.db, nil).AddTracking(f.ctx, f.member, s.ID, "1Z1", ptr("UPS Freight")); err != nil {
		t.Fatal(err)
	}
	want(t, "the same number with a corrected carrier", f.emitted())
	if _, err := fulfillment.NewService(f.db, nil).AddTracking(f.ctx, f.member, s.ID, "1Z2", nil); err != nil {
		t.Fatal(err)
	}
	want(t, "a replacement number", f.emitted(), events.ShipmentTrackingAdded)
}

func TestRefusalsChangeNothing(t *testing.T) {
	f := newFixture(t)
	id := f.order()
	s, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.member, id, fulfillment.Ship{Carrier: "UPS"})
	if err != nil {
		t.Fatal(err)
	}
	cancelled := f.order()
	f.db.Exec(`UPDATE orders SET status = 'cancelled' WHERE id = ?`, cancelled)
	f.emitted()
	audits := f.audits()
	future, early := time.Now().Add(48*time.Hour), time.Now().Add(-time.Hour)
	cases := []struct {
		name string
		err  error
		call func() error
	}{
		{"a cancelled order", fulfillment.ErrOrderNotShippable, func() error {
			_, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.member, cancelled, fulfillment.Ship{Carrier: "UPS"})
			return err
		}},
		{"no carrier", problem.Invalid, func() error {
			_, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.member, id, fulfillment.Ship{Carrier: "  "})
			return err
		}},
		{"an over-long carrier", problem.Invalid, func() error {
			_, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.member, id, fulfillment.Ship{Carrier: strings.Repeat("é", 101)})
			return err
		}},
		{"a tracking number with a newline", problem.Invalid, func() error {
			_, err := fulfillment.NewService(f.db, nil).AddTracking(f.ctx, f.member, s.ID, "1Z\n1", nil)
			return err
		}},
		{"shipped in the future", problem.Invalid, func() error {
			_, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.member, id, fulfillment.Ship{Carrier: "UPS", ShippedAt: &future})
			return err
		}},
		{"delivered before it shipped", problem.Invalid, func() error {
			_, err := fulfillment.NewService(f.db, nil).MarkDelivered(f.ctx, f.member, s.ID, &early)
			return err
		}},
		{"an order of another org", problem.NotFound, func() error {
			_, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.outsider, id, fulfillment.Ship{Carrier: "UPS"})
			return err
		}},
		{"tracking on another org's shipment", problem.NotFound, func() error {
			_, err := fulfillment.NewService(f.db, nil).AddTracking(f.ctx, f.outsider, s.ID, "1Z9", nil)
			return err
		}},
		{"an unknown shipment", problem.NotFound, func() error {
			_, err := fulfillment.NewService(f.db, nil).MarkDelivered(f.ctx, f.member, uuid.New(), nil)
			return err
		}},
	}
	for _, c := range cases {
		if err := c.call(); !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}
	want(t, "refused calls", f.emitted())
	var shipments int64
	f.db.Raw(`SELECT count(*) FROM shipments`).Find(&shipments)
	if f.audits() != audits || shipments != 1 {
		t.Errorf("refused calls wrote %d audit rows and %d shipments", f.audits()-audits, shipments-1)
	}
}

// Twenty concurrent "delivered" reports for one shipment deliver it once: one order.delivered.
func TestConcurrentDeliveredReportsGiveOneOrderDelivered(t *testing.T) {
	f := newFixture(t)
	id := f.order()
	s, err := fulfillment.NewService(f.db, nil).ShipOrder(f.ctx, f.member, id, fulfillment.Ship{Carrier: "UPS"})
	if err != nil {
		t.Fatal(err)
	}
	f.emitted()
	audits := f.audits()
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := fulfillment.NewService(f.db, nil).MarkDelivered(f.ctx, f.member, s.ID, nil); err != nil || got.Status != "delivered" {
				t.Errorf("%+v %v", got, err)
			}
		}()
	}
	wg.Wait()
	want(t, "twenty delivered reports", f.emitted(), events.OrderDelivered)
	if f.audits() != audits+1 {
		t.Errorf("%d audit rows, want 1", f.audits()-audits)
	}
}
