package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/models"
)

// FuzzIntegrationWritesNever500 posts arbitrary bodies to every write endpoint of the real router on a
// real database: bad input must never produce a 500.
func FuzzIntegrationWritesNever500(f *testing.F) {
	e := newIntEnv(f)
	k := e.mint(apikeys.NewIntegrationKey{})
	native := e.mint(apikeys.NewIntegrationKey{PayloadFormat: models.FormatNativestore})
	order := e.post("/integrations/v1/orders", k, orderBody("seed", 0, 0, ptr[int64](100), [2]int64{1, 1000}))
	m := order.json(f)
	paths := []string{"/integrations/v1/orders", "/integrations/v1/orders/" + m["id"].(string) + "/payments",
		"/integrations/v1/payments/" + m["payment_id"].(string) + "/refund", "/integrations/v1/clients",
		"/integrations/v1/orders/" + m["id"].(string) + "/cancel"}
	for _, s := range []string{
		orderBody("f1", 1, 2, ptr[int64](3), [2]int64{1, 1}),
		`{"external_id":"p","amount_cents":5,"paid_at":"2026-01-01T00:00:00Z"}`,
		`{"external_id":"c","email":"a@b.c","tags":["x"],"billing_address":{"city":"y"}}`,
		`{"amount_cents":1000}`, `{"external_id":"\u0000"}`, `{"lines":[{"quantity":9223372036854775807,"unit_price_cents":9223372036854775807}]}`,
		`{"id":1,"status":"processing","currency":"JPY","total":"100","line_items":[{"quantity":1,"total":"100"}]}`,
	} {
		for i := range len(paths) + 1 {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		e.clock.Add(time.Minute) // keep every execution inside the keys' rate limits
		key, path := k, "/integrations/v1/webhook/nativestore"
		if int(route)%(len(paths)+1) < len(paths) {
			path = paths[int(route)%(len(paths)+1)]
		} else {
			key = native
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key.token)
		if key.secret != "" {
			req.Header.Set("X-Store-Webhook-Signature", signNative(key.secret, body))
		}
		rec := openapitest.Serve(t, e.router, req)
		if rec.Code >= http.StatusInternalServerError {
			t.Fatalf("%s %q: %d %s", path, body, rec.Code, rec.Body)
		}
	})
}
