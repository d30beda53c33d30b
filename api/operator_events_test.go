package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/recovery"
	"wds/models"
	"wds/test/deliverytest"
	"wds/workflows/contract"
)

// eventDesk is an org with two endpoints and events about one order in every state the support
// desk tells apart, logged as the delivery engine logs them.
type eventDesk struct {
	*opEnv
	a, b                                        uuid.UUID // endpoints
	order, payment, shipment                    uuid.UUID
	created, paid, tracked, vendor, otherOrders uuid.UUID // events
}

func (e *opEnv) emit(typ string, data any) uuid.UUID {
	e.t.Helper()
	id, err := deliverytest.Emit(context.Background(), e.db, e.org.ID, nil, typ, data)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// attempt logs one attempt of a chain.
func (e *opEnv) attempt(ev, ep, chain uuid.UUID, n int, status models.Status, next *time.Time) models.Delivery {
	e.t.Helper()
	var typ string
	e.db.Raw("SELECT type FROM events WHERE id = ?", ev).Scan(&typ)
	d := models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: ev, EndpointID: ep, EventType: typ, ChainID: chain,
		WorkflowID: contract.EventWorkflowID(ev), Attempt: n, Status: status, AttemptedAt: time.Now().UTC(), NextAttemptAt: next}
	if err := e.db.Create(&d).Error; err != nil {
		e.t.Fatal(err)
	}
	return d
}

// orderEventData is an order as events carry it, whole, so the event page's payload is one the document
// describes.
func orderEventData(id uuid.UUID, number string) map[string]any {
	at := time.Now().UTC().Format(time.RFC3339Nano)
	return map[string]any{"id": id, "number": number, "status": "invoiced", "fulfillment_status": "unfulfilled",
		"store_id": uuid.New(), "client_id": nil, "external_id": nil, "currency": "EUR", "subtotal_cents": 100,
		"shipping_cents": 0, "tax_cents": 0, "total_cents": 100, "amount_paid_cents": 0,
		"lines":    []any{map[string]any{"description": "Tea", "quantity": 1, "unit_price_cents": 100, "total_cents": 100, "metadata": map[string]any{}}},
		"payments": []any{}, "shipments": []any{}, "metadata": map[string]any{},
		"source":     map[string]any{"kind": "app", "integration_key_id": nil, "label": nil},
		"created_at": at, "updated_at": at, "cancelled_at": nil}
}

func newEventDesk(t *testing.T) *eventDesk {
	e := &eventDesk{opEnv: newOpEnv(t, true), order: uuid.New(), payment: uuid.New(), shipment: uuid.New()}
	for i, dst := range []*uuid.UUID{&e.a, &e.b} {
		_, ep := e.rpc(e.ownerToken, "outbound_webhook_create", map[string]any{"p_url": fmt.Sprintf("https://127.0.0.1/%d", i),
			"p_event_types": []string{"order.created", "payment.recorded"}})
		*dst = uuid.MustParse(ep["id"].(string))
	}
	order := orderEventData(e.order, "1042")
	err := e.db.Exec(`INSERT INTO orders (id, org_id, store_id, number, currency, subtotal_cents, total_cents, status)
		SELECT ?, org_id, id, 1042, 'EUR', 100, 100, 'invoiced' FROM stores WHERE org_id = ?`, e.order, e.org.ID).Error
	if err != nil {
		t.Fatal(err)
	}
	e.created = e.emit(events.OrderCreated, order)
	e.paid = e.emit(events.PaymentRecorded, map[string]any{"payment": map[string]any{"id": e.payment}, "order": order})
	e.tracked = e.emit(events.ShipmentTrackingAdded, map[string]any{"shipment": map[string]any{"id": e.shipment}, "order": order})
	e.vendor = e.emit(events.VendorCreated, map[string]any{"id": uuid.New()})
	e.otherOrders = e.emit(events.OrderCreated, map[string]any{"id": uuid.New()})
	e.db.Exec("UPDATE events SET dispatched_at = clock_timestamp() WHERE org_id = ?", e.org.ID)

	// order.created: A succeeded; B dropped after two attempts.
	e.attempt(e.created, e.a, uuid.New(), 1, "succeeded", nil)
	chainB := uuid.New()
	e.attempt(e.created, e.b, chainB, 1, "failed", nil)
	e.attempt(e.created, e.b, chainB, 2, "dropped", nil)
	// payment.recorded: A still has an attempt to come.
	next := time.Now().Add(time.Hour).UTC()
	e.attempt(e.paid, e.a, uuid.New(), 1, "failed", &next)
	// otherOrders: both succeeded.
	e.attempt(e.otherOrders, e.a, uuid.New(), 1, "succeeded", nil)
	e.attempt(e.otherOrders, e.b, uuid.New(), 1, "succeeded", nil)
	return e
}

func (e *eventDesk) list(token, query string) (int, map[string]any) {
	return e.call(http.MethodGet, "/admin/v1/orgs/"+e.org.ID.String()+"/events?"+query, token, nil)
}

func ids(page map[string]any) []string {
	var out []string
	for _, r := range page["rows"].([]any) {
		out = append(out, r.(map[string]any)["id"].(string))
	}
	return out
}

func TestSupportDeskFindsAnOrdersEventsWithTheirOutcome(t *testing.T) {
	e := newEventDesk(t)
	status, page := e.list(e.memberToken, "order_id="+e.order.String())
	want := []string{e.tracked.String(), e.paid.String(), e.created.String()}
	if status != http.StatusOK || fmt.Sprint(ids(page)) != fmt.Sprint(want) || page["next_cursor"] != nil {
		t.Fatalf("order's events %d %v, want %v", status, page, want)
	}
	rows := page["rows"].([]any)
	outcome := func(i int) string { return rows[i].(map[string]any)["outcome"].(string) }
	if outcome(0) != "no_endpoints" || outcome(1) != "in_progress" || outcome(2) != "dropped" ||
		rows[2].(map[string]any)["chains_total"] != 2.0 || rows[1].(map[string]any)["resource_id"] != e.payment.String() ||
		rows[0].(map[string]any)["resource_id"] != e.shipment.String() || rows[2].(map[string]any)["order_id"] != e.order.String() ||
		rows[2].(map[string]any)["order_number"] != "1042" {
		t.Fatalf("rows %v", rows)
	}
	for _, c := range []struct {
		query string
		want  []uuid.UUID
	}{
		{"resource_id=" + e.payment.String(), []uuid.UUID{e.paid}},
		{"order_number=1042&limit=2", []uuid.UUID{e.tracked, e.paid}},
		{"order_number=1043", nil},
		{"store_id=" + uuid.NewString(), nil},
		{"type=order.created", []uuid.UUID{e.otherOrders, e.created}},
		{"outcome=dropped", []uuid.UUID{e.created}},
		{"outcome=succeeded", []uuid.UUID{e.otherOrders}},
		{"outcome=no_endpoints&order_id=" + e.order.String(), []uuid.UUID{e.tracked}},
		{"", []uuid.UUID{e.otherOrders, e.vendor, e.tracked, e.paid, e.created}},
		{"until=" + url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339)), nil},
		{"since=" + url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339)) + "&type=vendor.created", []uuid.UUID{e.vendor}},
	} {
		_, page := e.list(e.ownerToken, c.query)
		if fmt.Sprint(ids(page)) != fmt.Sprint(uuidStrings(c.want)) {
			t.Errorf("%s: %v, want %v", c.query, ids(page), c.want)
		}
	}
	// Keyset paging walks every event once.
	var walked []string
	query := "limit=2"
	for {
		_, page := e.list(e.ownerToken, query)
		walked = append(walked, ids(page)...)
		next, ok := page["next_cursor"].(map[string]any)
		if !ok {
			break
		}
		query = "limit=2&cursor_at=" + url.QueryEscape(next["at"].(string)) + "&cursor_id=" + next["id"].(string)
	}
	if len(walked) != 5 {
		t.Fatalf("paged through %v", walked)
	}

	_, _, otherOwner := mustOrg(t, e.db, "Elsewhere")
	other := e.token(otherOwner.ID)
	for _, c := range []struct {
		token, query string
		status       int
		code         string
	}{
		{e.ownerToken, "order_id=1042", 400, "invalid_parameter"},
		{e.ownerToken, "order_number=A-1042", 400, "invalid_parameter"},
		{e.ownerToken, "order_number=1042&order_id=" + e.order.String(), 400, "invalid_parameter"},
		{e.ownerToken, "resource_id=x", 400, "invalid_parameter"},
		{e.ownerToken, "outcome=lost", 400, "invalid_parameter"},
		{e.ownerToken, "type=order.exploded", 400, "invalid_parameter"},
		{e.ownerToken, "since=yesterday", 400, "invalid_parameter"},
		{e.ownerToken, "since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", 400, "invalid_parameter"},
		{e.ownerToken, "limit=0", 400, "invalid_parameter"},
		{e.ownerToken, "cursor_at=2026-01-01T00:00:00Z", 400, "invalid_cursor"},
		{other, "", 404, "not_found"},
	} {
		status, body := e.list(c.token, c.query)
		if status != c.status || body["error"] != c.code {
			t.Errorf("%q: %d %v, want %d %s", c.query, status, body, c.status, c.code)
		}
	}
}

func uuidStrings(in []uuid.UUID) []string {
	var out []string
	for _, id := range in {
		out = append(out, id.String())
	}
	return out
}

func TestSupportDeskShowsAnEventsPayloadChainsAndAttempts(t *testing.T) {
	e := newEventDesk(t)
	// A re-fire of B's dropped chain, queued and then delivered.
	var dropped models.Delivery
	e.db.Where("event_id = ? AND status = 'dropped'", e.created).Take(&dropped)
	status, re := e.post(e.ownerToken, "/admin/v1/deliveries/"+dropped.ID.String()+"/refire", nil)
	if status != http.StatusOK {
		t.Fatalf("refire %d %v", status, re)
	}
	_, page := e.list(e.memberToken, "order_id="+e.order.String()+"&type=order.created")
	if page["rows"].([]any)[0].(map[string]any)["outcome"] != "in_progress" {
		t.Fatalf("a queued re-fire is a chain in progress: %v", page)
	}
	e.attempt(e.created, e.b, uuid.MustParse(re["chain_id"].(string)), 1, "succeeded", nil)

	status, ev := e.call(http.MethodGet, "/admin/v1/events/"+e.created.String(), e.memberToken, nil)
	if status != http.StatusOK || ev["outcome"] != "succeeded" || ev["chains_total"] != 3.0 {
		t.Fatalf("event %d %v", status, ev)
	}
	var stored string
	e.db.Raw("SELECT body::text FROM events WHERE id = ?", e.created).Scan(&stored)
	raw, _ := json.Marshal(ev["payload"])
	var a, b any
	json.Unmarshal(raw, &a)
	json.Unmarshal([]byte(stored), &b)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("payload %s, stored %s", raw, stored)
	}
	chains := ev["chains"].([]any)
	kinds := map[string]int{}
	for _, c := range chains {
		c := c.(map[string]any)
		kinds[c["kind"].(string)+"/"+c["outcome"].(string)] += len(c["attempts"].([]any))
		if c["endpoint_url"] == "" || c["workflow_id"] == "" {
			t.Errorf("chain %v", c)
		}
	}
	if len(chains) != 3 || kinds["original/succeeded"] != 1 || kinds["original/dropped"] != 2 || kinds["refire/succeeded"] != 1 {
		t.Fatalf("chains %v", kinds)
	}

	_, _, otherOwner := mustOrg(t, e.db, "Elsewhere")
	for _, c := range []struct{ path, token string }{
		{"/admin/v1/events/" + uuid.NewString(), e.ownerToken},
		{"/admin/v1/events/not-an-id", e.ownerToken},
		{"/admin/v1/events/" + e.created.String(), e.token(otherOwner.ID)},
	} {
		if status, body := e.call(http.MethodGet, c.path, c.token, nil); status != 404 || body["error"] != "not_found" {
			t.Errorf("%s: %d %v", c.path, status, body)
		}
	}
}

func (e *eventDesk) resend(token string, ev uuid.UUID, body any) (int, map[string]any) {
	return e.call(http.MethodPost, "/admin/v1/events/"+ev.String()+"/resend", token, body)
}

func (e *eventDesk) dispatches() int64 {
	var n int64
	e.db.Model(&models.Dispatch{}).Count(&n)
	return n
}

func TestResendStartsAFreshChainAndRefusesWhatItCannotDo(t *testing.T) {
	e := newEventDesk(t)
	// A succeeded chain may be resent: the receiver lost it.
	status, out := e.resend(e.ownerToken, e.created, map[string]any{"endpoint_id": e.a})
	chains, _ := out["chains"].([]any)
	if status != http.StatusAccepted || len(chains) != 1 || chains[0].(map[string]any)["endpoint_id"] != e.a.String() ||
		chains[0].(map[string]any)["workflow_id"] != contract.ResendWorkflowID(e.created, e.a, 1) {
		t.Fatalf("resend %d %v", status, out)
	}
	var disp models.Dispatch
	e.db.Where("chain_id = ?", chains[0].(map[string]any)["chain_id"]).Take(&disp)
	if disp.Kind != "resend" || disp.EventID != e.created || *disp.CreatedBy != e.owner.ID || len(e.started.ids) != 1 || e.started.ids[0] != disp.ID {
		t.Fatalf("dispatch %+v, started %v", disp, e.started.ids)
	}
	_, ev := e.call(http.MethodGet, "/admin/v1/events/"+e.created.String(), e.memberToken, nil)
	if ev["outcome"] != "in_progress" || ev["chains_total"] != 3.0 {
		t.Fatalf("a queued resend is in progress: %v", ev)
	}

	// The rest of the table must change nothing.
	e.db.Exec("UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'manual' WHERE id = ?", e.b)
	_, _, otherOwner := mustOrg(t, e.db, "Elsewhere")
	before := e.dispatches()
	for _, c := range []struct {
		name   string
		token  string
		ev     uuid.UUID
		body   any
		status int
		code   string
	}{
		{"again while the first is queued", e.ownerToken, e.created, map[string]any{"endpoint_id": e.a}, 409, "delivery_in_progress"},
		{"to all while one is in progress", e.ownerToken, e.paid, nil, 409, "delivery_in_progress"},
		{"disabled endpoint", e.ownerToken, e.otherOrders, map[string]any{"endpoint_id": e.b}, 409, "endpoint_disabled"},
		{"not subscribed", e.ownerToken, e.tracked, map[string]any{"endpoint_id": e.a}, 422, "invalid_parameter"},
		{"nobody subscribed", e.ownerToken, e.vendor, nil, 422, "invalid_parameter"},
		{"unknown endpoint", e.ownerToken, e.otherOrders, map[string]any{"endpoint_id": uuid.New()}, 404, "not_found"},
		{"endpoint_id not a UUID", e.ownerToken, e.otherOrders, map[string]any{"endpoint_id": "b"}, 422, "validation_failed"},
		{"body not an object", e.ownerToken, e.otherOrders, "[1]", 400, "invalid_json"},
		{"member", e.memberToken, e.otherOrders, nil, 403, "forbidden"},
		{"another org", e.token(otherOwner.ID), e.otherOrders, nil, 404, "not_found"},
		{"unknown event", e.ownerToken, uuid.New(), nil, 404, "not_found"},
	} {
		status, body := e.resend(c.token, c.ev, c.body)
		if status != c.status || body["error"] != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.name, status, body, c.status, c.code)
		}
	}
	if n := e.dispatches(); n != before {
		t.Fatalf("refused resends queued %d chains", n-before)
	}

	// Ten resends at once of one event to every subscribed endpoint: one wins, the others find its
	// chain in progress.
	e.db.Exec("UPDATE webhook_endpoints SET enabled = true, disabled_reason = NULL WHERE id = ?", e.b)
	statuses := make(chan int, 10)
	for range 10 {
		go func() {
			status, _ := e.post(e.ownerToken, "/admin/v1/events/"+e.otherOrders.String()+"/resend", nil)
			statuses <- status
		}()
	}
	won := 0
	for range 10 {
		switch <-statuses {
		case http.StatusAccepted:
			won++
		case http.StatusConflict:
		default:
			t.Error("a concurrent resend answered neither 202 nor 409")
		}
	}
	if n := e.dispatches(); won != 1 || n != before+2 {
		t.Fatalf("%d resends won and %d chains were queued, want 1 and 2", won, n-before)
	}
	var audit []models.AuditEntry
	e.db.Where("action = 'event.resend'").Find(&audit)
	if len(audit) != 2 || audit[0].TargetID != e.created || audit[0].ActorID != e.owner.ID {
		t.Fatalf("audit %+v", audit)
	}
}

func TestRecoveryRefusesWhatItCannotDoAndChangesNothing(t *testing.T) {
	e := newEventDesk(t)
	recover := func(token string, ep uuid.UUID, body any) (int, map[string]any) {
		return e.call(http.MethodPost, "/admin/v1/endpoints/"+ep.String()+"/recover", token, body)
	}
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	status, rec := recover(e.ownerToken, e.b, map[string]any{"since": since})
	if status != http.StatusAccepted || rec["total"] != 1.0 || rec["started"] != 0.0 || rec["status"] != "running" {
		t.Fatalf("recover %d %v", status, rec)
	}
	id := rec["id"].(string)
	if status, got := e.call(http.MethodGet, "/admin/v1/recoveries/"+id, e.memberToken, nil); status != 200 || got["id"] != id {
		t.Fatalf("show %d %v", status, got)
	}
	var n int64
	count := func() int64 { e.db.Model(&models.Recovery{}).Count(&n); return n }
	e.db.Exec("UPDATE webhook_endpoints SET enabled = false WHERE id = ?", e.a)
	_, _, otherOwner := mustOrg(t, e.db, "Elsewhere")
	other := e.token(otherOwner.ID)
	for _, c := range []struct {
		name   string
		token  string
		ep     uuid.UUID
		body   any
		status int
		code   string
	}{
		{"running already", e.ownerToken, e.b, map[string]any{"since": since}, 409, "recovery_in_progress"},
		{"disabled", e.ownerToken, e.a, map[string]any{"since": since}, 409, "endpoint_disabled"},
		{"no since", e.ownerToken, e.b, map[string]any{}, 422, "validation_failed"},
		{"since unparseable", e.ownerToken, e.b, map[string]any{"since": "last tuesday"}, 422, "validation_failed"},
		{"since in the future", e.ownerToken, e.b, map[string]any{"since": time.Now().Add(time.Hour).Format(time.RFC3339)}, 422, "invalid_parameter"},
		{"since after until", e.ownerToken, e.b, map[string]any{"since": since, "until": time.Now().Add(-2 * time.Hour).Format(time.RFC3339)}, 422, "invalid_parameter"},
		{"member", e.memberToken, e.b, map[string]any{"since": since}, 403, "forbidden"},
		{"another org", other, e.b, map[string]any{"since": since}, 404, "not_found"},
		{"unknown endpoint", e.ownerToken, uuid.New(), map[string]any{"since": since}, 404, "not_found"},
	} {
		if status, body := recover(c.token, c.ep, c.body); status != c.status || body["error"] != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.name, status, body, c.status, c.code)
		}
	}
	if count() != 1 {
		t.Fatalf("refusals made %d recoveries", n-1)
	}
	if status, body := e.call(http.MethodPost, "/admin/v1/recoveries/"+id+"/cancel", e.memberToken, nil); status != 403 || body["error"] != "forbidden" {
		t.Fatalf("member cancel %d %v", status, body)
	}
	if status, body := e.call(http.MethodPost, "/admin/v1/recoveries/"+id+"/cancel", other, nil); status != 404 {
		t.Fatalf("other org's cancel %d %v", status, body)
	}
	status, got := e.call(http.MethodPost, "/admin/v1/recoveries/"+id+"/cancel", e.ownerToken, nil)
	if status != 200 || got["status"] != "cancelled" || got["finished_at"] == nil {
		t.Fatalf("cancel %d %v", status, got)
	}
	if status, again := e.call(http.MethodPost, "/admin/v1/recoveries/"+id+"/cancel", e.ownerToken, nil); status != 200 || again["finished_at"] != got["finished_at"] {
		t.Fatalf("cancel again %d %v", status, again)
	}
	// With a retention, a window older than it is refused, the retention written as people write it.
	old := recovery.NewService(e.db, nil, 24*time.Hour)
	if _, err := old.Recover(context.Background(), e.b, e.owner.ID, time.Now().Add(-48*time.Hour), nil); err == nil || !strings.Contains(err.Error(), "older than the retention (1 day)") {
		t.Fatalf("older than the retention: %v", err)
	}
	var audit []models.AuditEntry
	e.db.Where("action IN ('endpoint.recover', 'recovery.cancel')").Order("created_at").Find(&audit)
	if len(audit) != 2 || audit[0].Action != "endpoint.recover" || audit[1].Action != "recovery.cancel" {
		t.Fatalf("audit %+v", audit)
	}
}

// A recovery skips the drops whose event was resent to the endpoint after the drop, and says so; with
// nothing left to re-fire it is completed in its very answer and starts no workflow, and the
// endpoint's health no longer counts the drop.
func TestRecoverySkipsWhatWasResentAndCompletesWithNothingToDo(t *testing.T) {
	e := newEventDesk(t)
	if status, out := e.call(http.MethodPost, "/admin/v1/events/"+e.created.String()+"/resend", e.ownerToken,
		map[string]any{"endpoint_id": e.b}); status != http.StatusAccepted {
		t.Fatalf("resend %d %v", status, out)
	}
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	status, rec := e.call(http.MethodPost, "/admin/v1/endpoints/"+e.b.String()+"/recover", e.ownerToken, map[string]any{"since": since})
	if status != http.StatusAccepted || rec["total"] != 0.0 || rec["skipped"] != 1.0 || rec["status"] != "completed" || rec["finished_at"] == nil {
		t.Fatalf("recover %d %v", status, rec)
	}
	if status, got := e.call(http.MethodGet, "/admin/v1/recoveries/"+rec["id"].(string), e.memberToken, nil); status != 200 ||
		got["status"] != "completed" || got["skipped"] != 1.0 {
		t.Fatalf("show %d %v", status, got)
	}
	if status, got := e.call(http.MethodGet, "/admin/v1/recoveries/"+rec["id"].(string), e.memberToken, nil); status != 200 ||
		got["succeeded"] != 0.0 || got["retrying"] != 0.0 || got["dropped"] != 0.0 {
		t.Fatalf("show %d %v", status, got)
	}
	var undispatched int64
	e.db.Model(&models.Recovery{}).Where("dispatched_at IS NULL").Count(&undispatched)
	if undispatched != 0 {
		t.Fatal("a recovery with nothing to do waits for its workflow to be started")
	}
	_, list := e.rpc(e.memberToken, "outbound_webhook_list", nil)
	for _, r := range list["rows"].([]any) {
		if row := r.(map[string]any); row["id"] == e.b.String() && row["health"].(map[string]any)["unrecovered_dropped"] != 0.0 {
			t.Fatalf("the resent drop is still unrecovered: %v", row["health"])
		}
	}
}

// A query parameter the operation does not take is an error naming those it does, not a filter
// silently ignored: ?order=1042 once answered every event of the org.
func TestAnUnknownQueryParameterIsRefusedNamingTheKnownOnes(t *testing.T) {
	e := newEventDesk(t)
	status, body := e.list(e.memberToken, "order=1042")
	detail, _ := body["detail"].(string)
	if status != http.StatusBadRequest || body["error"] != "invalid_parameter" ||
		!strings.Contains(detail, `"order"`) || !strings.Contains(detail, "order_number") {
		t.Fatalf("?order=1042: %d %v, want 400 invalid_parameter naming order_number", status, body)
	}
	if status, body := e.list(e.memberToken, "order_number=1042&limit=5"); status != http.StatusOK {
		t.Fatalf("the documented filters: %d %v", status, body)
	}
	status, body = e.call(http.MethodGet, "/admin/v1/events/"+e.created.String()+"?verbose=1", e.memberToken, nil)
	if detail, _ := body["detail"].(string); status != http.StatusBadRequest || !strings.Contains(detail, "takes none") {
		t.Fatalf("an operation without query parameters: %d %v", status, body)
	}
}

// An order's events go again to one endpoint in one call, named by the order's number or id: each
// event the endpoint is subscribed to, once, oldest first; a chain still in progress to it refuses
// the whole call and queues nothing.
func TestResendingAnOrdersEventsToOneEndpoint(t *testing.T) {
	e := newEventDesk(t)
	resend := func(token, order string, body any) (int, map[string]any) {
		return e.call(http.MethodPost, "/admin/v1/orders/"+order+"/resend", token, body)
	}
	status, out := resend(e.ownerToken, "1042", map[string]any{"endpoint_id": e.b})
	chains, _ := out["chains"].([]any)
	if status != http.StatusAccepted || len(chains) != 2 ||
		chains[0].(map[string]any)["workflow_id"] != contract.ResendWorkflowID(e.created, e.b, 1) ||
		chains[1].(map[string]any)["workflow_id"] != contract.ResendWorkflowID(e.paid, e.b, 1) {
		t.Fatalf("resend order 1042 to B: %d %v", status, out)
	}
	before := e.dispatches()
	_, _, otherOwner := mustOrg(t, e.db, "Elsewhere")
	for _, c := range []struct {
		name, token, order string
		body               any
		status             int
		code               string
	}{
		{"a chain in progress (payment.recorded to A)", e.ownerToken, "1042", map[string]any{"endpoint_id": e.a}, 409, "delivery_in_progress"},
		{"the resent chains still in progress, by the order's id", e.ownerToken, e.order.String(), map[string]any{"endpoint_id": e.b}, 409, "delivery_in_progress"},
		{"no such order", e.ownerToken, "9999", map[string]any{"endpoint_id": e.b}, 404, "not_found"},
		{"not an order", e.ownerToken, "last-one", map[string]any{"endpoint_id": e.b}, 422, "invalid_parameter"},
		{"no endpoint", e.ownerToken, "1042", map[string]any{}, 422, "validation_failed"},
		{"a member", e.memberToken, "1042", map[string]any{"endpoint_id": e.b}, 403, "forbidden"},
		{"another org", e.token(otherOwner.ID), "1042", map[string]any{"endpoint_id": e.b}, 404, "not_found"},
	} {
		if status, body := resend(c.token, c.order, c.body); status != c.status || body["error"] != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.name, status, body, c.status, c.code)
		}
	}
	if after := e.dispatches(); after != before {
		t.Fatalf("refusals queued %d chains", after-before)
	}
	var audit []models.AuditEntry
	e.db.Where("action = 'order.resend'").Find(&audit)
	if len(audit) != 1 || audit[0].TargetID != e.order {
		t.Fatalf("audit %+v", audit)
	}
}

// Each row says how the event stands at each endpoint, and the search by endpoint keeps the events
// with a chain there, each with that endpoint's outcome: order.created is dropped overall, but
// succeeded at A.
func TestEventSearchByEndpointGivesThatEndpointsOutcome(t *testing.T) {
	e := newEventDesk(t)
	status, page := e.list(e.memberToken, "order_id="+e.order.String())
	if status != http.StatusOK {
		t.Fatalf("list %d %v", status, page)
	}
	outcomes := func(row map[string]any) map[string]string {
		out := map[string]string{}
		for _, x := range row["endpoints"].([]any) {
			out[x.(map[string]any)["endpoint_id"].(string)] = x.(map[string]any)["outcome"].(string)
		}
		return out
	}
	for _, r := range page["rows"].([]any) {
		row := r.(map[string]any)
		if row["id"] == e.created.String() {
			if got := outcomes(row); len(got) != 2 || got[e.a.String()] != "succeeded" || got[e.b.String()] != "dropped" {
				t.Fatalf("order.created at each endpoint: %v", got)
			}
		}
		if row["id"] == e.tracked.String() && len(outcomes(row)) != 0 {
			t.Fatalf("an event of no chain names endpoints: %v", row)
		}
	}
	for _, c := range []struct {
		query string
		want  []string
		outc  []string
	}{
		{"endpoint_id=" + e.a.String(), []string{e.otherOrders.String(), e.paid.String(), e.created.String()}, []string{"succeeded", "in_progress", "succeeded"}},
		{"endpoint_id=" + e.b.String() + "&outcome=dropped", []string{e.created.String()}, []string{"dropped"}},
		{"endpoint_id=" + e.b.String() + "&outcome=succeeded", []string{e.otherOrders.String()}, []string{"succeeded"}},
		{"endpoint_id=" + e.a.String() + "&order_id=" + e.order.String(), []string{e.paid.String(), e.created.String()}, []string{"in_progress", "succeeded"}},
	} {
		status, page := e.list(e.memberToken, c.query)
		if status != http.StatusOK || fmt.Sprint(ids(page)) != fmt.Sprint(c.want) {
			t.Fatalf("%s: %d %v, want %v", c.query, status, page, c.want)
		}
		for i, r := range page["rows"].([]any) {
			if got := r.(map[string]any)["outcome"]; got != c.outc[i] {
				t.Errorf("%s: row %d's outcome %v, want %s", c.query, i, got, c.outc[i])
			}
		}
	}
	if status, body := e.list(e.memberToken, "endpoint_id=nope"); status != 400 || body["error"] != "invalid_parameter" {
		t.Fatalf("a bad endpoint_id: %d %v", status, body)
	}
}
