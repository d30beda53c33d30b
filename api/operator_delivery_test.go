package api_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"wds/models"
)

// One attempt over the Operator API: its id (the X-PC-Delivery-Id the receiver got), the order its
// event is about (the number a customer quotes), the headers its POST carried and what came back. A custom header's value is read by owners and admins only; a
// member gets its name with an empty value, and wds's own headers with theirs. The event's attempts
// carry the same; lists leave the headers out; another org's attempt, or an unknown one, is 404.
func TestADeliveryShowsTheHeadersItSentByRole(t *testing.T) {
	e := newEventDesk(t)
	d := e.attempt(e.created, e.a, uuid.New(), 1, models.StatusFailed, nil)
	code := 500
	sent, err := models.SentHeaders(e.box, map[string]string{"Content-Type": "application/json", "X-Pc-Delivery-Id": d.ID.String(),
		"Webhook-Signature": "v1,c2lnbmF0dXJl", "X-Tenant": "acme-secret"}, models.Headers{"X-Tenant": "acme-secret"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Sent, d.ResponseStatus, d.ResponseExcerpt, d.Error = sent, &code, "boom", "HTTP 500"
	if err := e.db.Save(&d).Error; err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who, token, tenant string
	}{{"owner", e.ownerToken, "acme-secret"}, {"member", e.memberToken, ""}} {
		status, got := e.call(http.MethodGet, "/admin/v1/deliveries/"+d.ID.String(), c.token, nil)
		h, _ := got["request_headers"].(map[string]any)
		if status != http.StatusOK || got["id"] != d.ID.String() || got["response_status"] != 500.0 || got["response_excerpt"] != "boom" ||
			got["error"] != "HTTP 500" || h["X-Pc-Delivery-Id"] != d.ID.String() || h["Webhook-Signature"] != "v1,c2lnbmF0dXJl" ||
			h["X-Tenant"] != c.tenant || len(h) != 4 || got["order_number"] != "1042" {
			t.Fatalf("%s: %d %v", c.who, status, got)
		}
		_, ev := e.call(http.MethodGet, "/admin/v1/events/"+e.created.String(), c.token, nil)
		found := false
		for _, ch := range ev["chains"].([]any) {
			for _, a := range ch.(map[string]any)["attempts"].([]any) {
				a := a.(map[string]any)
				if a["id"] == d.ID.String() {
					found = a["request_headers"].(map[string]any)["X-Tenant"] == c.tenant
				} else if _, has := a["request_headers"]; has {
					t.Errorf("%s: an attempt that recorded no headers shows %v", c.who, a["request_headers"])
				}
			}
		}
		if !found {
			t.Fatalf("%s: the event's attempt lacks its headers: %v", c.who, ev)
		}
	}
	_, list := e.rpc(e.ownerToken, "outbound_webhook_list_deliveries", map[string]any{"p_id": e.a})
	for _, r := range list["rows"].([]any) {
		if _, has := r.(map[string]any)["request_headers"]; has {
			t.Fatalf("a list row carries the headers: %v", r)
		}
	}
	_, _, otherOwner := mustOrg(t, e.db, "Elsewhere")
	for _, c := range []struct{ path, token string }{
		{"/admin/v1/deliveries/" + uuid.NewString(), e.ownerToken},
		{"/admin/v1/deliveries/not-an-id", e.ownerToken},
		{"/admin/v1/deliveries/" + d.ID.String(), e.token(otherOwner.ID)},
	} {
		if status, body := e.call(http.MethodGet, c.path, c.token, nil); status != http.StatusNotFound || body["error"] != "not_found" {
			t.Errorf("%s: %d %v", c.path, status, body)
		}
	}
}
