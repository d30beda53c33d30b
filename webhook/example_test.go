package webhook_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"wds/webhook"
)

// The secret of these examples, and a delivery wds signed with it at 2023-11-14T22:13:20Z.
const (
	secret = "whsec_5Zx9cTq3Lr8yVb2NwPk4Hd7Jm1Ga6Fe0Su9Xo3Ri2Ty"
	header = "t=1700000000,v1=4b10f0f2b5c34952e5bc964bda946be29dbff99cce08995c81b11530d0780639"
	body   = `{"id":"o_1","total_cents":1250}`
)

// Verify the raw body exactly as it arrived, with the receiver's clock (time.Now() in a receiver).
func ExampleVerify() {
	now := time.Unix(1700000042, 0)
	fmt.Println(webhook.Verify(secret, header, []byte(body), now))
	fmt.Println(webhook.Verify(secret, header, []byte(`{"id":"o_1","total_cents":1}`), now))
	// Output:
	// <nil>
	// webhook: no v1 signature in X-PC-Signature matches the body and secret
}

// Every failure matches one sentinel; a stale delivery is also a *TimestampError saying when.
func ExampleVerify_errors() {
	for _, c := range []struct {
		header string
		now    time.Time
	}{
		{"", time.Unix(1700000000, 0)},
		{"t=1700000000", time.Unix(1700000000, 0)},
		{header, time.Unix(1700000000+301, 0)},
		{header, time.Unix(1700000000-301, 0)},
	} {
		err := webhook.Verify(secret, c.header, []byte(body), c.now)
		switch {
		case errors.Is(err, webhook.ErrMissingHeader):
			fmt.Println("missing:", err)
		case errors.Is(err, webhook.ErrMalformedHeader):
			fmt.Println("malformed:", err)
		case errors.Is(err, webhook.ErrTooOld), errors.Is(err, webhook.ErrTooNew):
			var te *webhook.TimestampError
			errors.As(err, &te)
			fmt.Printf("stale by %v: %v\n", te.Now.Sub(time.Unix(te.Timestamp, 0)), err)
		}
	}
	// Output:
	// missing: webhook: X-PC-Signature header is missing
	// malformed: webhook: X-PC-Signature header is malformed: missing v1
	// stale by 5m1s: webhook: X-PC-Signature t=1700000000 is more than 300 s before the receiver's clock (1700000301)
	// stale by -5m1s: webhook: X-PC-Signature t=1700000000 is more than 300 s after the receiver's clock (1699999699)
}

// Parse verifies and decodes in one call; Data stays raw JSON, to decode by the event's type.
func ExampleParse() {
	signedAt := time.Unix(1795591800, 0)
	raw := []byte(`{"id":null,"type":"webhook.test","created_at":"2026-11-25T07:30:00Z","org_id":"5b0e7c1a-2f3d-4c8e-9a6b-0d1e2f3a4b5c",` +
		`"store_id":null,"data":{"endpoint_id":"94d0c1b2-3a4e-4f5a-8b6c-7d8e9f0a1b2c","message":"This is a test event from Workspace Data Service."}}`)
	ev, err := webhook.Parse(secret, webhook.Sign(secret, signedAt, raw), raw, signedAt.Add(time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	var data struct {
		EndpointID string `json:"endpoint_id"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.Type, ev.ID == nil, ev.CreatedAt.Format(time.RFC3339), data.EndpointID)
	// Output:
	// webhook.test true 2026-11-25T07:30:00Z 94d0c1b2-3a4e-4f5a-8b6c-7d8e9f0a1b2c
}

// A receiver's handler: verify, deduplicate on the event id, answer 2xx quickly. Sign makes
// deliveries for the receiver's own tests.
func ExampleSign() {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 7<<20)) // events are at most 6 MB
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		ev, err := webhook.Parse(secret, r.Header.Get(webhook.HeaderSignature), raw, time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		// Record the event id with a unique key and skip the work if it was there. It is "null"
		// (and ev.ID nil) for webhook.test events, which are never retried.
		fmt.Println("received", ev.Type, r.Header.Get(webhook.HeaderEventID))
		w.WriteHeader(http.StatusNoContent)
	})

	raw := []byte(`{"id":"3f1c9a52-8d4e-4b7a-9c2f-6e5d4a3b2c1d","type":"order.created","data":{}}`)
	for _, sig := range []string{webhook.Sign(secret, time.Now(), raw), webhook.Sign("whsec_other", time.Now(), raw)} {
		req := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(string(raw)))
		req.Header.Set(webhook.HeaderSignature, sig)
		req.Header.Set(webhook.HeaderEventID, "3f1c9a52-8d4e-4b7a-9c2f-6e5d4a3b2c1d")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// received order.created 3f1c9a52-8d4e-4b7a-9c2f-6e5d4a3b2c1d
	// 204
	// 401
}
