package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"wds/internal/apikeys"
	"wds/internal/events/eventstest"
)

// The race tests: fifty requests released at once through the real router over real PostgreSQL, each
// asserting what must hold whichever request wins: who executed, what every other request heard, and
// that the outbox holds exactly the events of the writes that won.

// raceWidth is how many requests each race sends at once.
const raceWidth = 50

// race sends n requests at once: every goroutine waits at the start line until all are ready, then
// send(i) runs for each. It returns the answers by i.
func race(n int, send func(i int) resp) []resp {
	out := make([]resp, n)
	var ready, wg sync.WaitGroup
	ready.Add(n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			ready.Done()
			<-start
			out[i] = send(i)
		})
	}
	ready.Wait()
	close(start)
	wg.Wait()
	return out
}

// errorOf returns the error code of a failure answer in the error shape ({error, detail}, both set),
// or "" when the body is not that shape.
func errorOf(r resp) string {
	var b struct{ Error, Detail string }
	if json.Unmarshal(r.body, &b) != nil || b.Error == "" || b.Detail == "" {
		return ""
	}
	return b.Error
}

// countTypes counts event types.
func countTypes(types []string) map[string]int {
	n := map[string]int{}
	for _, t := range types {
		n[t]++
	}
	return n
}

// TestConcurrentCreatesOfOneExternalID: fifty creates of one external_id race; the database lets one
// through. It answers 201 duplicate:false; the 49 others 200 duplicate:true carrying the original
// record (its id, number and total, although their bodies asked for other totals). One order, one
// client, one order.created.
func TestConcurrentCreatesOfOneExternalID(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	results := race(raceWidth, func(i int) resp {
		// Bodies differ (and carry a client) so nothing but the external_id ties them together.
		body := fmt.Sprintf(`{"external_id":"race","client":{"external_id":"c-%d","email":"c%d@example.com"},
			"lines":[{"quantity":%d,"unit_price_cents":100}]}`, i, i, i+1)
		return e.post("/integrations/v1/orders", k, body)
	})
	var created, dup int
	var winner map[string]any
	for _, r := range results {
		m := r.json(t)
		switch {
		case r.status == http.StatusCreated && m["duplicate"] == false:
			created++
			winner = m
		case r.status == http.StatusOK && m["duplicate"] == true:
			dup++
		default:
			t.Fatalf("unexpected answer %d %s", r.status, r.body)
		}
	}
	if created != 1 || dup != raceWidth-1 {
		t.Fatalf("%d created, %d duplicates; want 1 and %d", created, dup, raceWidth-1)
	}
	for _, r := range results {
		m := r.json(t)
		for _, f := range []string{"id", "number", "status", "total_cents", "client_id", "external_id"} {
			if m[f] != winner[f] {
				t.Fatalf("a duplicate's %s is %v, the original's %v: %s", f, m[f], winner[f], r.body)
			}
		}
	}
	if o, c := e.count(`SELECT count(*) FROM orders`), e.count(`SELECT count(*) FROM clients`); o != 1 || c != 1 {
		t.Fatalf("%d orders, %d clients; want 1 each", o, c)
	}
	if got := eventstest.Written(t, e.db); !slices.Equal(got, []string{"order.created", "client.created"}) &&
		!slices.Equal(got, []string{"client.created", "order.created"}) {
		t.Fatalf("events %v, want one order.created and one client.created", got)
	}
}

// raceOneIdempotencyKey sends fifty order creates with one Idempotency-Key, request i with body(i),
// and checks the layer's promise: exactly one request executes (it is the only answer not marked
// Idempotent-Replayed); every other request whose body is byte-identical to the executed one hears
// its answer replayed byte for byte (or 409 idempotency_conflict, in progress); every other body is
// 409 idempotency_conflict. It returns the executed request's index.
func raceOneIdempotencyKey(t *testing.T, e *intEnv, k intKey, body func(i int) string) int {
	t.Helper()
	results := race(raceWidth, func(i int) resp {
		return e.call(http.MethodPost, "/integrations/v1/orders", k, body(i), map[string]string{"Idempotency-Key": "race"})
	})
	executed := -1
	for i, r := range results {
		if r.header.Get("Idempotent-Replayed") == "" && r.status != http.StatusConflict {
			if executed >= 0 {
				t.Fatalf("requests %d and %d both executed: %s and %s", executed, i, results[executed].body, r.body)
			}
			executed = i
		}
	}
	if executed < 0 {
		t.Fatal("no request executed")
	}
	first := results[executed]
	if first.status != http.StatusCreated || first.json(t)["duplicate"] != false {
		t.Fatalf("the executed request: %d %s", first.status, first.body)
	}
	for i, r := range results {
		switch {
		case i == executed:
		case r.status == http.StatusConflict:
			if code := errorOf(r); code != "idempotency_conflict" {
				t.Fatalf("request %d: 409 %s, want idempotency_conflict", i, r.body)
			}
			if body(i) == body(executed) && !bytes.Contains(r.body, []byte("in progress")) {
				t.Fatalf("request %d has the executed body but heard %s", i, r.body)
			}
		case body(i) != body(executed):
			t.Fatalf("request %d has another body than the executed one but heard %d %s", i, r.status, r.body)
		case r.status != first.status || !bytes.Equal(r.body, first.body) || r.header.Get("Idempotent-Replayed") != "true":
			t.Fatalf("request %d: %d replayed=%q %s, want the replay of %d %s", i, r.status,
				r.header.Get("Idempotent-Replayed"), r.body, first.status, first.body)
		}
	}
	var rows []struct{ Status int }
	e.db.Raw(`SELECT status FROM idempotency_keys`).Find(&rows)
	if len(rows) != 1 || rows[0].Status != http.StatusCreated {
		t.Fatalf("idempotency entries %v, want one settled with 201", rows)
	}
	return executed
}

// TestConcurrentIdempotencyKeyExecutesOnce: fifty identical creates with one Idempotency-Key. The body
// is the same for all (one external_id, an inline payment), so only the idempotency layer can keep a
// second execution from happening: one order, one payment, one order.created and one
// payment.recorded; 49 replays of the first answer.
func TestConcurrentIdempotencyKeyExecutesOnce(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	body := orderBody("same", 0, 0, ptr[int64](100), [2]int64{1, 100})
	raceOneIdempotencyKey(t, e, k, func(int) string { return body })
	if o, p := e.count(`SELECT count(*) FROM orders`), e.count(`SELECT count(*) FROM payments`); o != 1 || p != 1 {
		t.Fatalf("%d orders and %d payments, want 1 each", o, p)
	}
	if got := eventstest.Written(t, e.db); !slices.Equal(got, []string{"order.created", "payment.recorded"}) {
		t.Fatalf("events %v, want order.created and payment.recorded once", got)
	}
}

// TestConcurrentIdempotencyKeyWithOtherBodies: one Idempotency-Key, fifty creates. With fifty
// different bodies (each its own external_id) one executes and 49 hear 409 idempotency_conflict; with
// two bodies taking turns, the winner's 24 twins replay its answer and the other body's 25 are 409.
// Either way one order and one order.created, the winner's.
func TestConcurrentIdempotencyKeyWithOtherBodies(t *testing.T) {
	for name, body := range map[string]func(i int) string{
		"fifty bodies": func(i int) string { return orderBody(fmt.Sprintf("diff-%d", i), 0, 0, nil, [2]int64{1, 100}) },
		"two bodies":   func(i int) string { return orderBody(fmt.Sprintf("pair-%d", i%2), 0, 0, nil, [2]int64{1, 100}) },
	} {
		t.Run(name, func(t *testing.T) {
			e := newIntEnv(t)
			k := e.mint(apikeys.NewIntegrationKey{})
			winner := raceOneIdempotencyKey(t, e, k, body)
			var ids []string
			e.db.Raw(`SELECT external_id FROM orders`).Find(&ids)
			var want struct {
				ExternalID string `json:"external_id"`
			}
			if err := json.Unmarshal([]byte(body(winner)), &want); err != nil {
				t.Fatal(err)
			}
			if len(ids) != 1 || ids[0] != want.ExternalID {
				t.Fatalf("orders with external ids %v, want only the executed request's %s", ids, want.ExternalID)
			}
			if got := eventstest.Written(t, e.db); !slices.Equal(got, []string{"order.created"}) {
				t.Fatalf("events %v, want one order.created", got)
			}
		})
	}
}

// TestConcurrentRefundsOfOnePayment: fifty refunds of one payment at once. Forty ask for a full
// refund (thirty with no body, ten naming the full amount), ten for a partial one. Exactly one refund
// happens (200 already_refunded:false) and writes the one payment.refunded; the other 39 full refunds
// answer 200 already_refunded:true; the ten partial ones 422 partial_refund_not_supported. Never a 5xx.
func TestConcurrentRefundsOfOnePayment(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	o := e.post("/integrations/v1/orders", k, orderBody("refund-race", 0, 0, ptr[int64](2500), [2]int64{1, 2500})).
		want(t, http.StatusCreated, "")
	paymentID, orderID := o["payment_id"].(string), o["id"].(string)
	path := "/integrations/v1/payments/" + paymentID + "/refund"
	results := race(raceWidth, func(i int) resp {
		switch i % 5 {
		case 0:
			return e.post(path, k, `{"amount_cents":1000}`)
		case 1:
			return e.post(path, k, `{"amount_cents":2500}`)
		default:
			return e.post(path, k, "")
		}
	})
	var refunded, already, partial int
	for i, r := range results {
		if i%5 == 0 {
			if r.status != http.StatusUnprocessableEntity || errorOf(r) != "partial_refund_not_supported" {
				t.Fatalf("partial refund %d: %d %s", i, r.status, r.body)
			}
			partial++
			continue
		}
		if r.status != http.StatusOK {
			t.Fatalf("refund %d: %d %s", i, r.status, r.body)
		}
		m := r.json(t)
		if m["id"] != paymentID || m["order_id"] != orderID || m["refunded"] != true ||
			m["order_status"] != "refunded" || m["amount_paid_cents"] != float64(0) {
			t.Fatalf("refund %d: %s", i, r.body)
		}
		if m["already_refunded"] == false {
			refunded++
		} else {
			already++
		}
	}
	if refunded != 1 || already != 39 || partial != 10 {
		t.Fatalf("%d refunded, %d already refunded, %d partial; want 1, 39, 10", refunded, already, partial)
	}
	var order struct {
		Status          string
		AmountPaidCents int64
	}
	e.db.Raw(`SELECT status, amount_paid_cents FROM orders WHERE id = ?`, orderID).Find(&order)
	if n := e.count(`SELECT count(*) FROM payments WHERE refunded_at IS NOT NULL`); n != 1 ||
		order.Status != "refunded" || order.AmountPaidCents != 0 {
		t.Fatalf("%d refunded payments, order %+v; want 1 and refunded with 0 paid", n, order)
	}
	if got := eventstest.Written(t, e.db); !slices.Equal(got, []string{"order.created", "payment.recorded", "payment.refunded"}) {
		t.Fatalf("events %v, want order.created, payment.recorded and one payment.refunded", got)
	}
}

// TestCancelRacingPayments: 25 cancels and 25 payments of one invoiced order, interleaved and released
// at once. The order ends cancelled; exactly one cancel made it so (already_cancelled:false) and the
// 24 others say already_cancelled:true. Each payment either was recorded before the cancel (201) or
// was refused after it (409 order_not_payable): the payments the order holds are exactly the 201s,
// its paid sum is theirs, and order.cancelled shows every one of them, so none was accepted after the
// cancel. The outbox holds one order.created, one order.cancelled and a payment.recorded per 201.
func TestCancelRacingPayments(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	o := e.post("/integrations/v1/orders", k, orderBody("cancel-race", 0, 0, nil, [2]int64{1, 100_000})).
		want(t, http.StatusCreated, "")
	orderID := o["id"].(string)
	results := race(raceWidth, func(i int) resp {
		if i%2 == 0 {
			return e.post("/integrations/v1/orders/"+orderID+"/cancel", k, "")
		}
		return e.post("/integrations/v1/orders/"+orderID+"/payments", k,
			fmt.Sprintf(`{"external_id":"pay-%d","amount_cents":100,"method":"card"}`, i))
	})
	var cancelled, alreadyCancelled, refused int
	accepted := map[string]bool{}
	for i, r := range results {
		if r.status >= 500 {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
		m := r.json(t)
		switch {
		case i%2 == 0:
			if r.status != http.StatusOK || m["id"] != orderID || m["status"] != "cancelled" {
				t.Fatalf("cancel %d: %d %s", i, r.status, r.body)
			}
			if m["already_cancelled"] == false {
				cancelled++
			} else {
				alreadyCancelled++
			}
		case r.status == http.StatusCreated:
			if m["order_id"] != orderID || m["duplicate"] != false || m["order_status"] != "partially_paid" {
				t.Fatalf("payment %d: %s", i, r.body)
			}
			accepted[m["id"].(string)] = true
		case r.status == http.StatusConflict && errorOf(r) == "order_not_payable":
			refused++
		default:
			t.Fatalf("payment %d: %d %s", i, r.status, r.body)
		}
	}
	if cancelled != 1 || alreadyCancelled != raceWidth/2-1 || len(accepted)+refused != raceWidth/2 {
		t.Fatalf("%d cancelled, %d already cancelled, %d payments accepted, %d refused", cancelled,
			alreadyCancelled, len(accepted), refused)
	}
	t.Logf("%d payments won the race, %d lost it", len(accepted), refused)

	var order struct {
		Status          string
		AmountPaidCents int64
		Cancelled       bool
	}
	e.db.Raw(`SELECT status, amount_paid_cents, cancelled_at IS NOT NULL AS cancelled FROM orders WHERE id = ?`, orderID).Find(&order)
	var stored []string
	e.db.Raw(`SELECT id::text FROM payments WHERE order_id = ?`, orderID).Find(&stored)
	if order.Status != "cancelled" || !order.Cancelled || order.AmountPaidCents != int64(100*len(accepted)) ||
		!sameSet(stored, accepted) {
		t.Fatalf("order %+v with payments %v; want cancelled with the %d accepted payments %v", order, stored,
			len(accepted), accepted)
	}

	n := countTypes(eventstest.Written(t, e.db))
	if n["order.created"] != 1 || n["order.cancelled"] != 1 || n["payment.recorded"] != len(accepted) || len(n) > 3 {
		t.Fatalf("events %v; want one order.created, one order.cancelled and %d payment.recorded", n, len(accepted))
	}
	// order.cancelled carries the order as the cancel left it: every accepted payment is in it.
	var inCancel []string
	for _, p := range e.eventBody("order.cancelled")["data"].(map[string]any)["payments"].([]any) {
		inCancel = append(inCancel, p.(map[string]any)["id"].(string))
	}
	if !sameSet(inCancel, accepted) {
		t.Fatalf("order.cancelled shows payments %v, but %v were accepted: one came after the cancel", inCancel, accepted)
	}
}

// sameSet reports whether ids holds exactly the keys of set, once each.
func sameSet(ids []string, set map[string]bool) bool {
	if len(ids) != len(set) {
		return false
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !set[id] || seen[id] {
			return false
		}
		seen[id] = true
	}
	return true
}
