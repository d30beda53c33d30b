package api_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"wds/models"
	"wds/workflows/contract"
)

func TestWebhookTestEventNeedsAReadWriteKeyOfTheEndpointsOrg(t *testing.T) {
	e := newOpEnv(t, true)
	_, ep := e.create("https://127.0.0.1/hook")
	id := ep["id"].(string)
	ro := mustReadKey(t, e.db, e.org.ID, e.owner.ID, models.ScopeReadOnly, nil)
	rw := mustReadKey(t, e.db, e.org.ID, e.owner.ID, models.ScopeReadWrite, nil)
	other, _, otherOwner := mustOrg(t, e.db, "Other")
	otherRW := mustReadKey(t, e.db, other.ID, otherOwner.ID, models.ScopeReadWrite, nil)

	cases := []struct {
		key, path string
		status    int
		code      string
	}{
		{"", "/v1/webhooks/test/" + id, 401, "missing_authorization"},
		{ro, "/v1/webhooks/test/" + id, 403, "insufficient_scope"},
		{otherRW, "/v1/webhooks/test/" + id, 404, "not_found"},
		{rw, "/v1/webhooks/test/" + uuid.NewString(), 404, "not_found"},
		{rw, "/v1/webhooks/test/not-a-uuid", 404, "not_found"},
	}
	for _, c := range cases {
		if status, body := e.post(c.key, c.path, nil); status != c.status || body["error"] != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.path, status, body, c.status, c.code)
		}
	}

	status, body := e.post(rw, "/v1/webhooks/test/"+id, nil)
	if status != http.StatusOK || body["endpoint_id"] != id || body["event_type"] != "webhook.test" || body["status"] != "enqueued" {
		t.Fatalf("%d %v", status, body)
	}
	deliveryID := uuid.MustParse(body["delivery_id"].(string))
	var disp models.Dispatch
	if err := e.db.Where("workflow_id = ?", contract.TestWorkflowID(deliveryID)).Take(&disp).Error; err != nil {
		t.Fatalf("no queued test workflow: %v", err)
	}
	if len(e.started.ids) != 1 || e.started.ids[0] != disp.ID {
		t.Fatalf("test not started after commit: %v", e.started.ids)
	}

	e.rpc(e.ownerToken, "outbound_webhook_disable", map[string]any{"p_id": id})
	if status, body := e.post(rw, "/v1/webhooks/test/"+id, nil); status != http.StatusConflict || body["error"] != "endpoint_disabled" {
		t.Fatalf("disabled: %d %v", status, body)
	}
}
