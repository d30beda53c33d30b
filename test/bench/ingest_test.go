package bench

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A request body written from the template is the JSON the map it was made of encodes, with this
// request's ids in it, with and without the inline payment.
func TestOrderBodyPutsItsIDsInTheTemplate(t *testing.T) {
	for _, payment := range []bool{false, true} {
		g := &ingester{prefix: "run-", payment: payment}
		var got map[string]any
		if err := json.Unmarshal(g.orderBody(42), &got); err != nil {
			t.Fatalf("payment %v: %v", payment, err)
		}
		client := got["client"].(map[string]any)
		want := map[string]any{"external_id": "run-42", "client": "client-run-42", "email": "c-run-42@example.com",
			"display_name": "Client run-42"}
		gotIDs := map[string]any{"external_id": got["external_id"], "client": client["external_id"],
			"email": client["email"], "display_name": client["display_name"]}
		if payment {
			pay := got["payment"].(map[string]any)
			want["payment"], want["provider_payment_id"] = "pay-run-42", "pi_run-42"
			gotIDs["payment"], gotIDs["provider_payment_id"] = pay["external_id"], pay["provider_payment_id"]
		} else if _, ok := got["payment"]; ok {
			t.Fatal("a payment in a body without one")
		}
		if !reflect.DeepEqual(gotIDs, want) || len(got["lines"].([]any)) != 3 {
			t.Fatalf("payment %v: ids %v, lines %v", payment, gotIDs, got["lines"])
		}
	}
}
