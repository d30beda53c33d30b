package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzOperatorRPC sends arbitrary operation names and parameter bodies to the Operator API as an
// owner: whatever arrives, the answer is deliberate (never a 500) and in the error shape.
func FuzzOperatorRPC(f *testing.F) {
	e := newOpEnv(f, false)
	for _, seed := range [][2]string{
		{"outbound_webhook_create", `{"p_url":"https://127.0.0.1/","p_event_types":["order.created"]}`},
		{"outbound_webhook_create", `{"p_url":"http://x","p_event_types":["order.created"],"p_max_attempts":1e99}`},
		{"outbound_webhook_list", `{"p_org_id":"00000000-0000-0000-0000-000000000000"}`},
		{"outbound_webhook_disable", `{"p_id":null}`},
		{"outbound_webhook_list_deliveries", `{"p_id":"8d3e1f1e-8f7b-4a4e-9a53-1c0a7d7e8b21","p_limit":-1,"p_cursor_at":"x","p_cursor_id":"y"}`},
		{"core.rpc_outbound_webhook_rotate_secret", `[]`},
		{"../x", "\x00"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, op, body string) {
		if strings.ContainsAny(op, "/?#% ") || strings.IndexFunc(op, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
			return // not one path segment a client could send
		}
		call := *e
		call.t = t // helpers must fail the fuzz input, not the fuzz target
		status, out := call.rpc(e.ownerToken, op, body)
		if status >= 500 {
			t.Fatalf("%s %q answered %d %v", op, body, status, out)
		}
		if status >= 400 && (out["error"] == nil || out["detail"] == nil) {
			t.Fatalf("%s %q answered %d without the error shape: %v", op, body, status, out)
		}
		if status == http.StatusCreated && out["secret"] == nil {
			t.Fatalf("create answered without the secret: %v", out)
		}
	})
}
