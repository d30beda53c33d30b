package endpoints_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
	"wds/models"
	"wds/test/deliverytest"
)

func intp(n int) *int { return &n }

func TestCreateRefusesHeadersTheServiceSetsAndRateLimitsOutOfRange(t *testing.T) {
	f := newFixture(t)
	tooMany := map[string]string{}
	for i := range 11 {
		tooMany[fmt.Sprintf("X-H%d", i)] = "v"
	}
	cases := []struct {
		name    string
		limit   *int
		headers map[string]string
		want    error
	}{
		{"X-PC-Signature", nil, map[string]string{"X-PC-Signature": "t=1,v1=x"}, endpoints.ErrInvalidParameter},
		{"webhook-signature", nil, map[string]string{"Webhook-Signature": "v1,x"}, endpoints.ErrInvalidParameter},
		{"webhook-id", nil, map[string]string{"webhook-id": "e"}, endpoints.ErrInvalidParameter},
		{"webhook-timestamp", nil, map[string]string{"WEBHOOK-TIMESTAMP": "1"}, endpoints.ErrInvalidParameter},
		{"x-pc- any case", nil, map[string]string{"x-Pc-Event-Id": "e"}, endpoints.ErrInvalidParameter},
		{"content-type", nil, map[string]string{"content-type": "text/plain"}, endpoints.ErrInvalidParameter},
		{"Content-Length", nil, map[string]string{"Content-Length": "1"}, endpoints.ErrInvalidParameter},
		{"HOST", nil, map[string]string{"HOST": "evil.example"}, endpoints.ErrInvalidParameter},
		{"User-Agent", nil, map[string]string{"User-Agent": "x"}, endpoints.ErrInvalidParameter},
		{"hop-by-hop", nil, map[string]string{"Transfer-Encoding": "chunked"}, endpoints.ErrInvalidParameter},
		{"connection", nil, map[string]string{"connection": "close"}, endpoints.ErrInvalidParameter},
		{"eleven names", nil, tooMany, endpoints.ErrInvalidParameter},
		{"long value", nil, map[string]string{"X-Token": strings.Repeat("a", 1025)}, endpoints.ErrInvalidParameter},
		{"line break", nil, map[string]string{"X-Token": "a\r\nX-Evil: 1"}, endpoints.ErrInvalidParameter},
		{"bad name", nil, map[string]string{"X Token": "a"}, endpoints.ErrInvalidParameter},
		{"twice", nil, map[string]string{"X-Token": "a", "x-token": "b"}, endpoints.ErrInvalidParameter},
		{"rate 0", intp(0), nil, problem.Invalid},
		{"rate 1001", intp(1001), nil, problem.Invalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: "https://127.0.0.1/hook",
				EventTypes: []string{events.OrderCreated}, RateLimit: c.limit, Headers: c.headers})
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
	var n int64
	f.DB.Model(&models.Endpoint{}).Count(&n)
	if n != 0 {
		t.Fatalf("%d endpoints written by refused creates", n)
	}
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: "https://127.0.0.1/hook",
		EventTypes: []string{events.OrderCreated}, RateLimit: intp(1000),
		Headers: map[string]string{"Authorization": "Bearer tok", "X-Tenant": strings.Repeat("a", 1024)}})
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.Svc.List(f.Ctx, f.Org, &f.Owner)
	if err != nil || len(list) != 1 {
		t.Fatalf("%v %v", list, err)
	}
	got := list[0]
	if *got.RateLimit != 1000 || got.Headers["Authorization"] != "Bearer tok" || got.DisabledReason != nil || got.Health == nil || ep.Health == nil {
		t.Fatalf("%+v", got)
	}
	// The database's own operator (`wds admin endpoint list`) reads the names alone.
	if list, _ = f.Svc.List(f.Ctx, f.Org, nil); list[0].Headers["Authorization"] != "" || len(list[0].Headers) != 2 {
		t.Fatalf("without an actor: %v", list[0].Headers)
	}
	// Under a key that does not open the set (a rotation missing its previous key) the endpoint is still
	// listed, with the names alone.
	otherBox, _ := secrets.NewBox(secrets.GenerateKey())
	other := endpoints.NewService(f.DB, otherBox, endpoints.Options{})
	if list, err = other.List(f.Ctx, f.Org, &f.Owner); err != nil || len(list[0].Headers) != 2 || list[0].Headers["Authorization"] != "" {
		t.Fatalf("under another key: %v %v", list, err)
	}
	// A row written before values were sealed reads as it was written.
	f.DB.Exec(`UPDATE webhook_endpoints SET headers = '{"X-Legacy": "plain"}', headers_sealed = NULL WHERE id = ?`, ep.ID)
	if list, _ = f.Svc.List(f.Ctx, f.Org, &f.Owner); list[0].Headers["X-Legacy"] != "plain" || len(list[0].Headers) != 1 {
		t.Fatalf("a legacy row: %v", list[0].Headers)
	}
}

func TestUpdateChangesOnlyWhatItNamesAndNullClears(t *testing.T) {
	f := newFixture(t)
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: "https://127.0.0.1/a",
		EventTypes: []string{events.OrderCreated}, RateLimit: intp(5), Headers: map[string]string{"X-A": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	up, err := f.Svc.Update(f.Ctx, endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner,
		URL: models.Optional[string]{Set: true, Value: "https://127.0.0.1/b"}, MaxAttempts: models.Optional[int]{Set: true, Value: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if up.URL != "https://127.0.0.1/b" || up.MaxAttempts != 3 || *up.RateLimit != 5 || up.Headers["X-A"] != "1" || len(up.EventTypes) != 1 || up.Health == nil {
		t.Fatalf("%+v", up)
	}
	up, err = f.Svc.Update(f.Ctx, endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner,
		RateLimit: models.Optional[int]{Set: true, Null: true}, Headers: models.Optional[map[string]string]{Set: true, Value: map[string]string{"X-B": "2"}},
		EventTypes: models.Optional[[]string]{Set: true, Value: []string{events.PaymentRecorded, events.OrderShipped}}})
	if err != nil {
		t.Fatal(err)
	}
	if up.RateLimit != nil || len(up.Headers) != 1 || up.Headers["X-B"] != "2" || len(up.EventTypes) != 2 {
		t.Fatalf("%+v", up)
	}
	up, err = f.Svc.Update(f.Ctx, endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner, Headers: models.Optional[map[string]string]{Set: true, Null: true}})
	if err != nil || len(up.Headers) != 0 {
		t.Fatalf("%+v %v", up, err)
	}
	var audit []models.AuditEntry
	f.DB.Where("action = ?", "webhook_endpoint.update").Order("created_at").Find(&audit)
	if len(audit) != 3 || audit[1].Details["rate_limit"] != nil || fmt.Sprint(audit[1].Details["header_names"]) != "[X-B]" {
		t.Fatalf("audit %+v", audit)
	}

	// Refusals change nothing: a member, an unknown or foreign id, a bad value.
	before, _ := f.Svc.List(f.Ctx, f.Org, nil)
	refusals := []struct {
		in   endpoints.UpdateInput
		want error
	}{
		{endpoints.UpdateInput{ID: ep.ID, ActorID: f.Member, RateLimit: models.Optional[int]{Set: true, Value: 9}}, problem.Forbidden},
		{endpoints.UpdateInput{ID: uuid.New(), ActorID: f.Owner, RateLimit: models.Optional[int]{Set: true, Value: 9}}, problem.NotFound},
		{endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner, URL: models.Optional[string]{Set: true, Value: "http://127.0.0.1/"}}, endpoints.ErrHTTPSRequired},
		{endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner, MaxAttempts: models.Optional[int]{Set: true, Value: 11}}, problem.Invalid},
		{endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner, RateLimit: models.Optional[int]{Set: true, Value: 0}}, problem.Invalid},
		{endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner, EventTypes: models.Optional[[]string]{Set: true, Value: []string{"nope"}}}, problem.Invalid},
		{endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner, RateLimit: models.Optional[int]{Set: true, Value: 9},
			Headers: models.Optional[map[string]string]{Set: true, Value: map[string]string{"Host": "x"}}}, endpoints.ErrInvalidParameter},
	}
	for i, r := range refusals {
		if _, err := f.Svc.Update(f.Ctx, r.in); !errors.Is(err, r.want) {
			t.Errorf("refusal %d: %v, want %v", i, err, r.want)
		}
	}
	after, _ := f.Svc.List(f.Ctx, f.Org, nil)
	before[0].Health, after[0].Health = nil, nil
	if fmt.Sprint(before[0]) != fmt.Sprint(after[0]) {
		t.Fatalf("a refused update changed the endpoint:\n%+v\n%+v", before[0], after[0])
	}
}

func TestCustomHeadersAreSentOnEveryAttemptUnsigned(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: rc.Srv.URL,
		EventTypes: []string{events.OrderCreated}, Headers: map[string]string{"Authorization": "Bearer tok", "x-tenant": "acme"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := f.Event(events.OrderCreated, map[string]any{"id": uuid.New()})
	if res, err := f.Acts(rc, true).Deliver(f.Ctx, deliverytest.Attempt(ev, ep.ID, 1, deliverytest.Later())); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("%+v %v", res, err)
	}
	h := rc.Got()[0].Header
	if h.Get("Authorization") != "Bearer tok" || h.Get("X-Tenant") != "acme" || h.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", h)
	}
}

func TestDisableSaysWhyAndEnableResetsHealth(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	ep := f.Endpoint(rc.Srv.URL)
	acts := f.Acts(rc, true)
	// Two chains: one dropped after its only attempt, one failed with an attempt to come.
	first := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, nil)
	acts.Deliver(f.Ctx, first)
	second := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	acts.Deliver(f.Ctx, second)
	list, _ := f.Svc.List(f.Ctx, f.Org, nil)
	h := list[0].Health
	if h.LastSuccessAt != nil || h.FailingSince == nil || h.ConsecutiveDropped != 1 || h.Failed24h != 2 || h.Succeeded24h != 0 {
		t.Fatalf("health %+v", h)
	}
	rc.Answer(nil) // the receiver recovers
	third := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	acts.Deliver(f.Ctx, third)
	list, _ = f.Svc.List(f.Ctx, f.Org, nil)
	if h := list[0].Health; h.LastSuccessAt == nil || h.FailingSince != nil || h.ConsecutiveDropped != 0 || h.Succeeded24h != 1 || h.Failed24h != 2 {
		t.Fatalf("health after a success %+v", h)
	}

	off, err := f.Svc.Disable(f.Ctx, ep.ID, f.Owner)
	if err != nil || off.DisabledReason == nil || *off.DisabledReason != models.DisabledManual || off.Health == nil {
		t.Fatalf("%+v %v", off, err)
	}
	time.Sleep(time.Millisecond) // the enable's time must follow the drop's
	on, err := f.Svc.Enable(f.Ctx, ep.ID, f.Owner)
	if err != nil || on.DisabledReason != nil || on.Health.FailingSince != nil || on.Health.ConsecutiveDropped != 0 {
		t.Fatalf("%+v %+v %v", on, on.Health, err)
	}
}

func TestEventsKnowTheirOrderAndResource(t *testing.T) {
	f := newFixture(t)
	order, payment, shipment, vendor := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	cases := []struct {
		typ           string
		data          any
		order, resrce *uuid.UUID
	}{
		{events.OrderCreated, map[string]any{"id": order}, &order, &order},
		{events.PaymentRecorded, map[string]any{"payment": map[string]any{"id": payment}, "order": map[string]any{"id": order}}, &order, &payment},
		{events.OrderShipped, map[string]any{"shipment": map[string]any{"id": shipment}, "order": map[string]any{"id": order}}, &order, &shipment},
		{events.ShipmentTrackingAdded, map[string]any{"shipment": map[string]any{"id": shipment}, "order": map[string]any{"id": order}}, &order, &shipment},
		{events.VendorCreated, map[string]any{"id": vendor}, nil, &vendor},
		{events.ClientUpdated, map[string]any{"id": "not-a-uuid"}, nil, nil},
	}
	for _, c := range cases {
		id := f.Event(c.typ, c.data)
		var row struct{ OrderID, ResourceID *uuid.UUID }
		f.DB.Raw("SELECT order_id, resource_id FROM events WHERE id = ?", id).Scan(&row)
		if fmt.Sprint(row.OrderID) != fmt.Sprint(c.order) || fmt.Sprint(row.ResourceID) != fmt.Sprint(c.resrce) {
			t.Errorf("%s: order %v resource %v, want %v %v", c.typ, row.OrderID, row.ResourceID, c.order, c.resrce)
		}
	}
}

// A header value is exactly RFC 9110's field-value: visible characters, spaces and tabs inside, and
// bytes from 0x80 up (here UTF-8); every other control character is refused, naming the header, and a
// refused value writes nothing. An accepted value is sent as it was given, which Go's client would
// not do for a control character: it refuses every POST instead.
func TestHeaderValuesAreExactlyRFC9110FieldValues(t *testing.T) {
	f := newFixture(t)
	refused := map[string]string{"leading space": " secret", "trailing tab": "secret\t", "invalid UTF-8": "secret\xff"}
	for b := range 0x80 {
		if b != '\t' && (b < 0x20 || b == 0x7f) {
			refused[fmt.Sprintf("byte %#02x", b)] = "secret" + string(rune(b)) + "b"
		}
	}
	for name, value := range refused {
		_, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: "https://127.0.0.1/hook",
			EventTypes: []string{events.OrderCreated}, Headers: map[string]string{"X-Token": value}})
		if !errors.Is(err, endpoints.ErrInvalidParameter) || !strings.Contains(problem.Detail(err), "X-Token") || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v, want invalid_parameter naming X-Token and not its value", name, err)
		}
	}
	var n int64
	f.DB.Model(&models.Endpoint{}).Count(&n)
	if n != 0 {
		t.Fatalf("%d endpoints written by refused creates", n)
	}

	var visible strings.Builder
	for b := byte(0x21); b < 0x7f; b++ {
		visible.WriteByte(b)
	}
	accepted := map[string]string{"X-Visible": visible.String(), "X-Inner": "a b\tc", "X-Utf8": "café ünïcødé ✓", "X-Empty": ""}
	rc := deliverytest.NewReceiver(t, nil)
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: rc.Srv.URL,
		EventTypes: []string{events.OrderCreated}, Headers: accepted})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Svc.Update(f.Ctx, endpoints.UpdateInput{ID: ep.ID, ActorID: f.Owner,
		Headers: models.Optional[map[string]string]{Set: true, Value: map[string]string{"X-Token": "a\x7fb"}}})
	if !errors.Is(err, endpoints.ErrInvalidParameter) || !strings.Contains(problem.Detail(err), "X-Token") {
		t.Fatalf("update with DEL: %v", err)
	}
	ev := f.Event(events.OrderCreated, map[string]any{"id": uuid.New()})
	if res, err := f.Acts(rc, true).Deliver(f.Ctx, deliverytest.Attempt(ev, ep.ID, 1, deliverytest.Later())); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("%+v %v", res, err)
	}
	h := rc.Got()[0].Header
	for name, value := range accepted {
		if got := h.Values(name); value != "" && (len(got) != 1 || got[0] != value) {
			t.Errorf("%s arrived as %q, want %q", name, got, value)
		}
	}
}
