package api_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/internal/ingest"
	"wds/models"
)

func TestIdempotencyKeyReplaysAndConflicts(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	body := orderBody("idem", 0, 0, nil, [2]int64{1, 100})
	h := map[string]string{"Idempotency-Key": "key-1"}
	first := e.call(http.MethodPost, "/integrations/v1/orders", k, body, h)
	first.want(t, http.StatusCreated, "")
	again := e.call(http.MethodPost, "/integrations/v1/orders", k, body, h)
	if again.status != http.StatusCreated || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay %d %s, want %d %s", again.status, again.body, first.status, first.body)
	}
	e.call(http.MethodPost, "/integrations/v1/orders", k, body+" ", h).want(t, http.StatusConflict, "idempotency_conflict")
	if n := e.count(`SELECT count(*) FROM events`); n != 1 {
		t.Fatalf("%d events after a replay, want 1", n)
	}
	// Another integration key has its own Idempotency-Key space.
	k2 := e.mint(apikeys.NewIntegrationKey{})
	e.call(http.MethodPost, "/integrations/v1/orders", k2, body, h).want(t, http.StatusCreated, "")

	// After 24 hours the key executes afresh: now the external_id layer answers duplicate.
	e.clock.Add(ingest.IdempotencyTTL + time.Second)
	later := e.call(http.MethodPost, "/integrations/v1/orders", k, body, h).want(t, http.StatusOK, "")
	if later["duplicate"] != true {
		t.Fatalf("after expiry %v", later)
	}
	// A new Idempotency-Key with a known external_id is a duplicate too.
	e.call(http.MethodPost, "/integrations/v1/orders", k, body, map[string]string{"Idempotency-Key": "key-2"}).want(t, http.StatusOK, "")
}

func TestIdempotencyStoresFailuresAfterExecutionOnly(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	h := map[string]string{"Idempotency-Key": "k"}
	// 400 invalid_json ends before execution: not stored, so a corrected body with the key executes.
	e.call(http.MethodPost, "/integrations/v1/orders", k, "not json", h).want(t, http.StatusBadRequest, "invalid_json")
	bad := `{"external_id":"v","lines":[]}`
	e.call(http.MethodPost, "/integrations/v1/orders", k, bad, h).want(t, http.StatusUnprocessableEntity, "lines_required")
	// 422 is an answer of the execution: replayed.
	r := e.call(http.MethodPost, "/integrations/v1/orders", k, bad, h)
	r.want(t, http.StatusUnprocessableEntity, "lines_required")
	if r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("the 422 was not replayed")
	}
	// 403 (payment block without payments:write) is not stored.
	limited := e.mint(apikeys.NewIntegrationKey{Scopes: []string{models.ScopeOrdersWrite}})
	withPay := orderBody("w", 0, 0, ptr[int64](100), [2]int64{1, 100})
	e.call(http.MethodPost, "/integrations/v1/orders", limited, withPay, h).want(t, http.StatusForbidden, "insufficient_scope")
	e.call(http.MethodPost, "/integrations/v1/orders", limited, orderBody("w", 0, 0, nil, [2]int64{1, 100}), h).want(t, http.StatusCreated, "")
}

func TestIdempotencyKeyLength(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	long := strings.Repeat("é", 256)
	e.call(http.MethodPost, "/integrations/v1/orders", k, minimalOrder, map[string]string{"Idempotency-Key": long}).
		want(t, http.StatusBadRequest, "invalid_idempotency_key")
	e.call(http.MethodPost, "/integrations/v1/orders", k, minimalOrder, map[string]string{"Idempotency-Key": long[:2*255]}).
		want(t, http.StatusCreated, "")
	if n := e.count(`SELECT count(*) FROM orders`); n != 1 {
		t.Fatalf("%d orders", n)
	}
}

// A request whose transaction the infrastructure cut short (here: the client gave up while the
// database kept it waiting) wrote nothing, so its Idempotency-Key is released, not settled with an
// error: the retry executes and creates the order.
func TestAnInfrastructureFailureReleasesTheIdempotencyKey(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	body := `{"external_id":"idem-infra","lines":[{"description":"Mug","quantity":1,"unit_price_cents":100}]}`

	// Hold the orders table so the create blocks inside its transaction.
	lock := e.db.Begin()
	if err := lock.Exec("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE").Error; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/integrations/v1/orders", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+k.token)
	req.Header.Set("Idempotency-Key", "infra-1")
	if res, err := openapitest.Client(t, nil).Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("the blocked create answered %d", res.StatusCode)
	}
	cancel()
	// The server notices the client is gone, its statement is cancelled and the claim released.
	deadline := time.Now().Add(10 * time.Second)
	for e.count(`SELECT count(*) FROM idempotency_keys WHERE key = 'infra-1'`) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the key stayed claimed after the client went away")
		}
		time.Sleep(20 * time.Millisecond)
	}
	lock.Rollback()

	r := e.call(http.MethodPost, "/integrations/v1/orders", k, body, map[string]string{"Idempotency-Key": "infra-1"})
	if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry: %d replayed=%q %s, want a fresh 201", r.status, r.header.Get("Idempotent-Replayed"), r.body)
	}
}
