package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wds/internal/apikeys"
	"wds/models"
)

// storeFixture loads a store-platform order payload, optionally with another status.
func storeFixture(t *testing.T, name, status string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "internal", "ingest", "nativestore", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if status == "" {
		return string(b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["status"] = status
	out, _ := json.Marshal(m)
	return string(out)
}

const receiver = "/integrations/v1/webhook/nativestore"

// TestNativestoreStatusMapping covers every row of the store-native mapping table for unknown orders.
func TestNativestoreStatusMapping(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{PayloadFormat: models.FormatNativestore, Label: "Woo"})
	cases := []struct {
		file, status, currency string
		total, paid            int64
		events                 []string
		paymentRefunded        bool
	}{
		{"pending_usd.json", "invoiced", "USD", 2985, 0, []string{"order.created"}, false},
		{"on_hold_eur.json", "invoiced", "EUR", 1776, 0, []string{"order.created"}, false},
		{"failed_gbp.json", "invoiced", "GBP", 2160, 0, []string{"order.created"}, false},
		{"processing_jpy.json", "paid", "JPY", 6100, 6100, []string{"order.created", "payment.recorded"}, false},
		{"completed_kwd.json", "paid", "KWD", 14500, 14500, []string{"order.created", "payment.recorded"}, false},
		{"cancelled_usd.json", "cancelled", "USD", 3000, 0, []string{"order.created", "order.cancelled"}, false},
		{"refunded_usd.json", "refunded", "USD", 2265, 0, []string{"order.created", "payment.recorded", "payment.refunded"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			before := len(e.events())
			body := storeFixture(t, tc.file, "")
			r := e.post(receiver, k, body).want(t, http.StatusCreated, "")
			if r["status"] != tc.status || r["total_cents"] != float64(tc.total) || r["amount_paid_cents"] != float64(tc.paid) || r["duplicate"] != false {
				t.Fatalf("answer %v", r)
			}
			types := e.events()[before:]
			// client.created comes first when the payload brings a new customer.
			if len(types) > 0 && strings.HasPrefix(types[0], "client.") {
				types = types[1:]
			}
			if strings.Join(types, ",") != strings.Join(tc.events, ",") {
				t.Fatalf("events %v, want %v", types, tc.events)
			}
			o := e.get("/integrations/v1/orders/by-external/"+r["external_id"].(string), k).want(t, http.StatusOK, "")
			if o["currency"] != tc.currency || o["source"].(map[string]any)["kind"] != "integration" {
				t.Fatalf("order %v", o)
			}
			if pays := o["payments"].([]any); tc.paymentRefunded && (len(pays) != 1 || pays[0].(map[string]any)["refunded"] != true) {
				t.Fatalf("payments %v", pays)
			}
			// The same payload again changes nothing.
			n := len(e.events())
			again := e.post(receiver, k, body).want(t, http.StatusOK, "")
			if again["duplicate"] != true || again["id"] != r["id"] || len(e.events()) != n {
				t.Fatalf("repeat %v", again)
			}
		})
	}
}

// TestNativestoreTransitionsOfAKnownOrder follows one platform order through its statuses.
func TestNativestoreTransitionsOfAKnownOrder(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{PayloadFormat: models.FormatNativestore})
	steps := []struct {
		status, want string
		code         int
		dup          bool
		event        string
	}{
		{"pending", "invoiced", http.StatusCreated, false, "order.created"},
		{"on-hold", "invoiced", http.StatusOK, true, ""},
		{"processing", "paid", http.StatusOK, false, "payment.recorded"},
		{"completed", "paid", http.StatusOK, true, ""},
		{"refunded", "refunded", http.StatusOK, false, "payment.refunded"},
		{"refunded", "refunded", http.StatusOK, true, ""},
		{"cancelled", "cancelled", http.StatusOK, false, "order.cancelled"},
		{"processing", "cancelled", http.StatusOK, true, ""},
	}
	for _, s := range steps {
		n := len(e.events())
		r := e.post(receiver, k, storeFixture(t, "pending_usd.json", s.status)).want(t, s.code, "")
		if r["status"] != s.want || r["duplicate"] != s.dup {
			t.Fatalf("%s: %v", s.status, r)
		}
		got := e.events()[n:]
		if len(got) > 0 && strings.HasPrefix(got[0], "client.") {
			got = got[1:]
		}
		if (s.event == "" && len(got) != 0) || (s.event != "" && (len(got) != 1 || got[0] != s.event)) {
			t.Fatalf("%s: events %v, want %q", s.status, got, s.event)
		}
	}
	if n := e.count(`SELECT count(*) FROM payments`); n != 1 {
		t.Fatalf("%d payments, want 1 (processing and completed pay once)", n)
	}
}

func TestNativestoreClientMatching(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{PayloadFormat: models.FormatNativestore})
	// Two guest orders (customer_id 0) with one billing email share one client.
	a := e.post(receiver, k, storeFixture(t, "pending_usd.json", "")).want(t, http.StatusCreated, "")
	b := e.post(receiver, k, strings.Replace(storeFixture(t, "cancelled_usd.json", ""), `"id": 732`, `"id": 9732`, 1)).want(t, http.StatusCreated, "")
	if a["client_id"] == nil || a["client_id"] != b["client_id"] {
		t.Fatalf("guest orders got clients %v and %v", a["client_id"], b["client_id"])
	}
	// customer_id names the client; the billing email also matches the same person.
	c := e.post(receiver, k, storeFixture(t, "on_hold_eur.json", "")).want(t, http.StatusCreated, "")
	d := e.post(receiver, k, storeFixture(t, "refunded_usd.json", "")).want(t, http.StatusCreated, "")
	if c["client_id"] != a["client_id"] || d["client_id"] != a["client_id"] {
		t.Fatalf("clients %v %v, want %v", c["client_id"], d["client_id"], a["client_id"])
	}
	if n := e.count(`SELECT count(*) FROM clients`); n != 1 {
		t.Fatalf("%d clients", n)
	}
}

func TestNativestoreRejectsUnmappedStatus(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{PayloadFormat: models.FormatNativestore})
	e.post(receiver, k, storeFixture(t, "pending_usd.json", "checkout-draft")).want(t, http.StatusUnprocessableEntity, "validation_failed")
	e.post(receiver, k, `webhook_id=12`).want(t, http.StatusOK, "")
	if n := e.count(`SELECT count(*) FROM orders`); n != 0 {
		t.Fatalf("%d orders", n)
	}
}
