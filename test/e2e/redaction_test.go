package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"wds/internal/dev/temporaldev"
	"wds/workflows/contract"
)

// An endpoint URL may carry a token in its query. Deliveries go to the full URL, but the workflow's
// history, which anyone with the Temporal UI reads, never holds it.
func TestTokensInEndpointURLsStayOutOfTemporalHistory(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()
	rc := newReceiver(t, ok)
	status, out := h.call("/admin/v1/rpc/outbound_webhook_create", h.ownerToken, map[string]any{
		"p_url": rc.srv.URL + "/hooks?token=sekrit-in-the-url", "p_event_types": []string{"order.created"}})
	if status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %v", status, out)
	}
	if status, out := h.order("redact-1"); status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, out)
	}
	waitFor(t, 20*time.Second, "the delivery", func() bool { return rc.count() == 1 })
	if q := rc.deliveries()[0].query; q != "token=sekrit-in-the-url" {
		t.Fatalf("the delivery went to ?%s, not the endpoint's full URL", q)
	}
	ev := h.events("order.created")
	id := contract.EventWorkflowID(ev[0].ID)
	var res contract.Result
	if err := h.temporal.GetWorkflow(h.ctx, id, "").Get(h.ctx, &res); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, e := range h.history(id) {
		b, _ := proto.Marshal(e) // binary: payloads' JSON appears as it is, not base64
		all.Write(b)
	}
	if !strings.Contains(all.String(), "/hooks") {
		t.Fatal("the history names no endpoint at all; the check would prove nothing")
	}
	if strings.Contains(all.String(), "sekrit") {
		t.Fatal("the endpoint URL's token is in the workflow's history")
	}
}
