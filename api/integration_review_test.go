package api_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"wds/internal/apikeys"
	"wds/models"
)

// A nativestore key on /orders hears wrong_format whatever it signed or failed to sign: the format
// depends on the key alone, so it is checked before the signature.
func TestWrongFormatComesBeforeSignatureChecks(t *testing.T) {
	e := newIntEnv(t)
	native := e.mint(apikeys.NewIntegrationKey{PayloadFormat: models.FormatNativestore})
	unsigned := map[string]string{"X-Store-Webhook-Signature": ""}
	e.call(http.MethodPost, "/integrations/v1/orders", native, minimalOrder, unsigned).want(t, http.StatusBadRequest, "wrong_format")
	pc := map[string]string{"X-Store-Webhook-Signature": "", "PC-Signature": "t=1,v1=00"}
	e.call(http.MethodPost, "/integrations/v1/orders", native, minimalOrder, pc).want(t, http.StatusBadRequest, "wrong_format")

	signedGeneric := e.mint(apikeys.NewIntegrationKey{RequireSignature: true})
	e.call(http.MethodPost, "/integrations/v1/webhook/nativestore", signedGeneric, `{"id":1}`,
		map[string]string{"PC-Signature": ""}).want(t, http.StatusBadRequest, "wrong_format")
	// Past the format, the signature is still required.
	e.call(http.MethodPost, "/integrations/v1/orders", signedGeneric, minimalOrder,
		map[string]string{"PC-Signature": ""}).want(t, http.StatusUnauthorized, "signature_missing")
}

// External ids are the caller's strings: one holding "/" must be found again.
func TestByExternalFindsIDsWithSlashes(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	for _, ext := range []string{"INV/2026/7", "a b", "x%y", "/leading"} {
		body := `{"external_id":` + strconv.Quote(ext) + `,"lines":[{"quantity":1,"unit_price_cents":100}]}`
		created := e.post("/integrations/v1/orders", k, body).want(t, http.StatusCreated, "")
		got := e.get("/integrations/v1/orders/by-external/"+url.PathEscape(ext), k).want(t, http.StatusOK, "")
		if got["id"] != created["id"] || got["external_id"] != ext {
			t.Fatalf("by-external %q found %v, want order %v", ext, got["id"], created["id"])
		}
	}
	e.get("/integrations/v1/orders/by-external/INV%2F2026", k).want(t, http.StatusNotFound, "not_found")
}

// An Idempotency-Key is bound to one request: reused on another order's cancel (same empty body)
// it is a conflict, never a replay of the first order's answer.
func TestIdempotencyKeyIsBoundToMethodAndPath(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	o1 := e.post("/integrations/v1/orders", k, `{"external_id":"o1","lines":[{"quantity":1,"unit_price_cents":100}]}`).want(t, http.StatusCreated, "")
	o2 := e.post("/integrations/v1/orders", k, `{"external_id":"o2","lines":[{"quantity":1,"unit_price_cents":100}]}`).want(t, http.StatusCreated, "")
	hdr := map[string]string{"Idempotency-Key": "cancel-key"}
	e.call(http.MethodPost, "/integrations/v1/orders/"+o1["id"].(string)+"/cancel", k, "", hdr).want(t, http.StatusOK, "")
	replay := e.call(http.MethodPost, "/integrations/v1/orders/"+o1["id"].(string)+"/cancel", k, "", hdr)
	if replay.want(t, http.StatusOK, ""); replay.header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("the same request with the same key must replay")
	}
	e.call(http.MethodPost, "/integrations/v1/orders/"+o2["id"].(string)+"/cancel", k, "", hdr).
		want(t, http.StatusConflict, "idempotency_conflict")
	if n := e.count("SELECT count(*) FROM orders WHERE id = ? AND status = 'cancelled'", o2["id"]); n != 0 {
		t.Fatal("the conflicting request executed")
	}
}
