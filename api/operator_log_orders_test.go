package api_test

import (
	"net/http"
	"testing"
)

// The delivery log's rows say which order: two attempts of order.created name their orders, the
// one whose order exists by its number ("1042", a string as the order's own number is) and the one
// about no order of the org with null, on the org's log and on an endpoint's.
func TestDeliveryLogRowsNameTheirOrderByNumber(t *testing.T) {
	e := newEventDesk(t)
	for path, body := range map[string]any{"/admin/v1/orgs/" + e.org.ID.String() + "/deliveries?event_type=order.created": nil,
		"/admin/v1/rpc/outbound_webhook_list_deliveries": map[string]any{"p_id": e.a}} {
		method := http.MethodGet
		if body != nil {
			method = http.MethodPost
		}
		status, page := e.call(method, path, e.memberToken, body)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %v", path, status, page)
		}
		numbers := map[string]any{}
		for _, r := range page["rows"].([]any) {
			row := r.(map[string]any)
			number, ok := row["order_number"]
			if !ok {
				t.Fatalf("%s: a row without order_number: %v", path, row)
			}
			numbers[row["event_id"].(string)] = number
		}
		if numbers[e.created.String()] != "1042" || numbers[e.otherOrders.String()] != nil {
			t.Errorf("%s: order numbers by event %v, want 1042 for order.created of order 1042 and null for the other", path, numbers)
		}
	}
}
