package api_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"wds/internal/apikeys"
)

// TestConcurrentOrdersOfOneNewClient: a new client arriving in many orders at once, named by its
// email alone, by its external_id alone, by both, or by one email under many external ids, is
// created once ({i} is the order's number).
func TestConcurrentOrdersOfOneNewClient(t *testing.T) {
	for name, client := range map[string]string{
		"email":           `{"email":"New@Example.com"}`,
		"external_id":     `{"external_id":"cust-1"}`,
		"both":            `{"external_id":"cust-1","email":"New@Example.com"}`,
		"email, many ids": `{"external_id":"cust-{i}","email":"new@example.COM"}`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newIntEnv(t)
			k := e.mint(apikeys.NewIntegrationKey{})
			const n = 10
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					c := strings.ReplaceAll(client, "{i}", strconv.Itoa(i))
					body := fmt.Sprintf(`{"external_id":"o-%d","client":%s,"lines":[{"quantity":1}]}`, i, c)
					if r := e.post("/integrations/v1/orders", k, body); r.status != http.StatusCreated {
						t.Errorf("%d %s", r.status, r.body)
					}
				})
			}
			wg.Wait()
			if c, ev := e.count(`SELECT count(*) FROM clients`), e.count(`SELECT count(DISTINCT client_id) FROM orders`); c != 1 || ev != 1 {
				t.Fatalf("%d clients, orders point at %d clients; want 1", c, ev)
			}
		})
	}
}

// TestCrossTenant: a key never reads or writes another store's or org's order, payment or client.
func TestCrossTenant(t *testing.T) {
	e := newIntEnv(t)
	owner := e.mint(apikeys.NewIntegrationKey{})
	o := e.post("/integrations/v1/orders", owner, orderBody("mine", 0, 0, ptr[int64](100), [2]int64{1, 1000})).want(t, http.StatusCreated, "")
	e.post("/integrations/v1/clients", owner, `{"external_id":"cl","email":"shared@example.com"}`).want(t, http.StatusCreated, "")

	otherStore := e.mint(apikeys.NewIntegrationKey{OrgID: e.org.ID, StoreID: mustStore(t, e, "Other")})
	org2, store2, owner2 := mustOrg(t, e.db, "Rival")
	otherOrg := e.mint(apikeys.NewIntegrationKey{OrgID: org2.ID, StoreID: store2.ID, ActorID: owner2.ID})
	for name, k := range map[string]intKey{"other store": otherStore, "other org": otherOrg} {
		t.Run(name, func(t *testing.T) {
			e.get("/integrations/v1/orders/by-external/mine", k).want(t, http.StatusNotFound, "not_found")
			e.post("/integrations/v1/orders/"+o["id"].(string)+"/payments", k, `{"external_id":"x","amount_cents":1}`).
				want(t, http.StatusNotFound, "not_found")
			e.post("/integrations/v1/orders/"+o["id"].(string)+"/cancel", k, "").want(t, http.StatusNotFound, "not_found")
			e.post("/integrations/v1/payments/"+o["payment_id"].(string)+"/refund", k, "").want(t, http.StatusNotFound, "not_found")
			// The same email in another store is another client, never the first store's.
			c := e.post("/integrations/v1/clients", k, `{"external_id":"cl","email":"shared@example.com"}`).want(t, http.StatusCreated, "")
			if c["created"] != true {
				t.Fatalf("client %v", c)
			}
		})
	}
	var status string
	e.db.Raw(`SELECT status FROM orders WHERE id = ?`, o["id"]).Scan(&status)
	if refunded := e.count(`SELECT count(*) FROM payments WHERE refunded_at IS NOT NULL`); status != "partially_paid" || refunded != 0 {
		t.Fatalf("another tenant changed the order: status %s, %d refunded payments", status, refunded)
	}
}

// TestFailedRequestLeavesNothing: a 4xx raised deep in the transaction, and a database error forced
// mid-transaction, both roll back every row and event.
func TestFailedRequestLeavesNothing(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	e.post("/integrations/v1/orders", k, orderBody("a", 0, 0, ptr[int64](100), [2]int64{1, 100})).want(t, http.StatusCreated, "")
	snapshot := func() string {
		return fmt.Sprint(e.count(`SELECT count(*) FROM orders`), e.count(`SELECT count(*) FROM order_lines`),
			e.count(`SELECT count(*) FROM payments`), e.count(`SELECT count(*) FROM clients`),
			e.count(`SELECT count(*) FROM external_refs`), e.count(`SELECT count(*) FROM events`))
	}
	before := snapshot()
	// The inline payment's external_id is already recorded: 409 after the client, order and lines
	// were written in the transaction.
	conflict := `{"external_id":"b","client":{"external_id":"new","email":"new@example.com"},
		"lines":[{"quantity":1,"unit_price_cents":100},{"quantity":2,"unit_price_cents":5}],
		"payment":{"external_id":"pay-a","amount_cents":110}}`
	e.post("/integrations/v1/orders", k, conflict).want(t, http.StatusConflict, "conflict")
	if after := snapshot(); after != before {
		t.Fatalf("a 409 left rows: %s, before %s", after, before)
	}

	// A database failure at the last statement (the outbox insert) of a create.
	if err := e.db.Exec(`CREATE FUNCTION fail_events() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'forced failure'; END; $$`).Error; err != nil {
		t.Fatal(err)
	}
	e.db.Exec(`CREATE TRIGGER fail_events BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_events()`)
	body := `{"external_id":"c","client":{"external_id":"new","email":"new@example.com"},
		"lines":[{"quantity":1,"unit_price_cents":100}],"payment":{"external_id":"pay-c","amount_cents":100}}`
	e.post("/integrations/v1/orders", k, body).want(t, http.StatusInternalServerError, "internal_error")
	if after := snapshot(); after != before {
		t.Fatalf("a failed transaction left rows: %s, before %s", after, before)
	}
	e.db.Exec(`DROP TRIGGER fail_events ON events`)
	// Nothing was claimed: the same request now creates the order.
	e.post("/integrations/v1/orders", k, body).want(t, http.StatusCreated, "")
}
