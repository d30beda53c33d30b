package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"

	"wds/api/openapi/openapitest"
	"wds/api/signing"
	"wds/internal/dev/temporalcluster"
	"wds/internal/dev/temporaldev"
	"wds/internal/dispatch"
	"wds/internal/platform/freeport"
	"wds/internal/platform/temporalclient"
	"wds/models"
	"wds/test/deliverytest"
	"wds/worker"
	"wds/workflows/contract"
)

// call POSTs body to the API and decodes the JSON object it answers.
func (h *harness) call(path, token string, body any) (int, map[string]any) {
	h.t.Helper()
	return h.request(http.MethodPost, path, token, body)
}

// request makes an HTTP request to the API (no Authorization header when token is empty) and
// decodes the JSON object it answers.
func (h *harness) request(method, path, token string, body any) (int, map[string]any) {
	h.t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, h.api.URL+path, bytes.NewReader(raw))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := openapitest.Client(h.t, nil).Do(req) // every answer is held to the served documents
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

type endpoint struct {
	id     uuid.UUID
	secret string
}

// endpoint registers a receiver through the Operator API.
func (h *harness) endpoint(rc *receiver, maxAttempts int, types ...string) endpoint {
	h.t.Helper()
	status, out := h.call("/admin/v1/rpc/outbound_webhook_create", h.ownerToken,
		map[string]any{"p_url": rc.srv.URL + "/hooks", "p_event_types": types, "p_max_attempts": maxAttempts})
	if status != http.StatusCreated {
		h.t.Fatalf("create endpoint: %d %v", status, out)
	}
	return endpoint{id: uuid.MustParse(out["id"].(string)), secret: out["secret"].(string)}
}

// order creates an order with an inline payment over the Integration API.
func (h *harness) order(externalID string) (int, map[string]any) {
	return h.call("/integrations/v1/orders", h.integrationKey, map[string]any{
		"external_id": externalID, "currency": "USD",
		"lines":   []map[string]any{{"description": "Mug", "quantity": 2, "unit_price_cents": 1500}},
		"payment": map[string]any{"external_id": "pay-" + externalID, "amount_cents": 3000, "method": "card"},
	})
}

func (h *harness) events(typ string) []models.Event {
	var evs []models.Event
	h.db.Where("org_id = ? AND type = ?", h.org, typ).Order("created_at").Find(&evs)
	return evs
}

// emit writes an event the way every write does (outbox row, then the after-commit start).
func (h *harness) emit(typ string) uuid.UUID {
	h.t.Helper()
	id, err := deliverytest.Emit(h.ctx, h.db, h.org, nil, typ, map[string]any{"id": uuid.New()})
	if err != nil {
		h.t.Fatal(err)
	}
	h.starter.StartEvents(h.ctx, []uuid.UUID{id})
	return id
}

// workflowsWith counts the workflows a visibility query finds, as the Temporal UI filters them.
func (h *harness) workflowsWith(query string) int {
	resp, err := h.temporal.ListWorkflow(h.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
	if err != nil {
		h.t.Fatal(err)
	}
	return len(resp.GetExecutions())
}

// temporalServers are the servers the webhook engine is proved on: the Temporal CLI's dev server
// (SQLite, one history shard), which `make run` and most tests use, and the cluster docker-compose.yml
// runs (the server built from source on PostgreSQL persistence and SQL visibility, 8 history shards),
// whose list queries over the Wds* search attributes are production's.
var temporalServers = []struct {
	name  string
	start func(t *testing.T) client.Client
}{
	{"dev server", func(t *testing.T) client.Client { return startTemporal(t, temporaldev.Options{}).Client() }},
	{"cluster", func(t *testing.T) client.Client {
		return temporalcluster.ForTest(t, temporalcluster.Options{}).Client()
	}},
}

func TestWebhooksEndToEnd(t *testing.T) {
	for _, server := range temporalServers {
		t.Run(server.name, func(t *testing.T) { webhooksEndToEnd(t, server.start(t)) })
	}
}

func webhooksEndToEnd(t *testing.T, tc client.Client) {
	h := newHarness(t, tc)
	h.startWorker()

	t.Run("an order reaches the subscribed endpoints only, signed", func(t *testing.T) {
		h.t = t
		a, b, c := newReceiver(t, ok), newReceiver(t, ok), newReceiver(t, ok)
		epA := h.endpoint(a, 5, "order.created", "payment.recorded")
		epB := h.endpoint(b, 5, "order.created")
		h.endpoint(c, 5, "vendor.created")

		start := time.Now()
		status, out := h.order("ord-1")
		if status != http.StatusCreated {
			t.Fatalf("create order: %d %v", status, out)
		}
		waitFor(t, 10*time.Second, "deliveries", func() bool { return a.count() == 2 && b.count() == 1 })
		first := slices.MinFunc(a.deliveries(), func(x, y received) int { return x.at.Compare(y.at) })
		t.Logf("latency from order create to first receipt: %v", first.at.Sub(start).Round(time.Millisecond))

		created, paid := h.events("order.created"), h.events("payment.recorded")
		if len(created) != 1 || len(paid) != 1 {
			t.Fatalf("events: %d order.created, %d payment.recorded", len(created), len(paid))
		}
		byType := map[string]received{}
		for _, d := range a.deliveries() {
			byType[d.eventType()] = d
			verify(t, d, epA.secret)
			if err := signing.VerifyPC([]byte(epB.secret), d.header.Get("X-PC-Signature"), d.body, d.at); !errors.Is(err, signing.ErrSignatureInvalid) {
				t.Error("endpoint A's delivery verifies with endpoint B's secret")
			}
		}
		for _, ev := range []models.Event{created[0], paid[0]} {
			d := byType[ev.Type]
			var stored string
			h.db.Raw("SELECT body::text FROM events WHERE id = ?", ev.ID).Scan(&stored)
			if d.eventID() != ev.ID.String() || string(d.body) != stored {
				t.Errorf("%s: event id %s body %s, want %s %s", ev.Type, d.eventID(), d.body, ev.ID, stored)
			}
		}
		bd := b.deliveries()[0]
		verify(t, bd, epB.secret)
		if bd.eventType() != "order.created" || bd.eventID() != created[0].ID.String() {
			t.Errorf("B got %s %s", bd.eventType(), bd.eventID())
		}

		// The same order again is a duplicate: no event, no delivery.
		if status, out := h.order("ord-1"); status != http.StatusOK || out["duplicate"] != true {
			t.Fatalf("duplicate: %d %v", status, out)
		}
		waitFor(t, 10*time.Second, "visibility", func() bool {
			return h.workflowsWith(fmt.Sprintf("WdsEventId = '%s' AND WdsDeliveryStatus = 'succeeded' AND WdsEndpointIds = '%s'", created[0].ID, epB.id)) == 1
		})
		h.settled()
		if a.count() != 2 || b.count() != 1 || c.count() != 0 || len(h.events("order.created")) != 1 {
			t.Fatalf("after the duplicate: A %d, B %d, C %d deliveries", a.count(), b.count(), c.count())
		}

		// Steady state: one order at a time, from the API call to the receipt at B.
		var lat []time.Duration
		for i := range 10 {
			start := time.Now()
			if status, out := h.order(fmt.Sprintf("ord-lat-%d", i)); status != http.StatusCreated {
				t.Fatalf("order: %d %v", status, out)
			}
			waitFor(t, 10*time.Second, "delivery", func() bool { return b.count() == i+2 })
			lat = append(lat, b.deliveries()[i+1].at.Sub(start))
		}
		slices.Sort(lat)
		t.Logf("order create to receipt over 10 orders: median %v, max %v", lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	})

	t.Run("500 then 200 logs failed then succeeded", func(t *testing.T) {
		h.t = t
		rc := newReceiver(t, failFirst(1))
		ep := h.endpoint(rc, 5, "client.created")
		ev := h.emit("client.created")
		waitFor(t, 15*time.Second, "second attempt", func() bool { return rc.count() == 2 })
		got := rc.deliveries()
		t.Logf("retry came %v after the first attempt (schedule: +1s)", got[1].at.Sub(got[0].at).Round(time.Millisecond))
		waitFor(t, 5*time.Second, "log", func() bool { return len(h.deliveries(ep.id)) == 2 })
		rows := h.deliveries(ep.id)
		// The ladder counts from the chain's start, not from attempt 1's arrival: the receipts' gap
		// is the delay less attempt 1's latency plus attempt 2's, so the log's times are compared.
		if rows[0].NextAttemptAt != nil && rows[1].AttemptedAt.Before(rows[0].NextAttemptAt.Add(-100*time.Millisecond)) {
			t.Errorf("attempt 2 at %v, before attempt 1's next_attempt_at %v", rows[1].AttemptedAt, *rows[0].NextAttemptAt)
		}
		if rows[0].Status != "failed" || *rows[0].ResponseStatus != 500 || rows[0].NextAttemptAt == nil || rows[0].Attempt != 1 ||
			rows[1].Status != "succeeded" || rows[1].Attempt != 2 || rows[1].NextAttemptAt != nil {
			t.Fatalf("log %+v", rows)
		}
		if rows[0].ID == rows[1].ID || rows[0].EventID != ev || rows[1].EventID != ev || rows[0].ChainID != rows[1].ChainID {
			t.Fatalf("ids: %+v", rows)
		}
		for i, d := range got {
			verify(t, d, ep.secret)
			if d.eventID() != ev.String() || d.header.Get("X-PC-Delivery-Id") != rows[i].ID.String() {
				t.Errorf("attempt %d: event %s delivery %s", i+1, d.eventID(), d.header.Get("X-PC-Delivery-Id"))
			}
		}
	})

	t.Run("rotation makes the next attempt verify only with the new secret", func(t *testing.T) {
		h.t = t
		rc := newReceiver(t, failFirst(1))
		ep := h.endpoint(rc, 5, "client.updated")
		var rotated string
		rc.onRequest = func(n int) {
			if n == 1 { // between attempt 1 and attempt 2
				_, out := h.call("/admin/v1/rpc/outbound_webhook_rotate_secret", h.ownerToken, map[string]any{"p_id": ep.id})
				rotated, _ = out["secret"].(string)
			}
		}
		h.emit("client.updated")
		waitFor(t, 15*time.Second, "second attempt", func() bool { return rc.count() == 2 })
		got := rc.deliveries()
		verify(t, got[0], ep.secret)
		verify(t, got[1], rotated)
		if err := signing.VerifyPC([]byte(ep.secret), got[1].header.Get("X-PC-Signature"), got[1].body, got[1].at); !errors.Is(err, signing.ErrSignatureInvalid) {
			t.Fatal("the old secret still verifies after rotation")
		}
		if got[0].header.Get("X-PC-Timestamp") == got[1].header.Get("X-PC-Timestamp") && got[0].header.Get("X-PC-Signature") == got[1].header.Get("X-PC-Signature") {
			t.Fatal("attempt 2 reused attempt 1's signature")
		}
	})

	t.Run("the test event arrives with X-PC-Event-Id null", func(t *testing.T) {
		h.t = t
		rc := newReceiver(t, ok)
		ep := h.endpoint(rc, 5, "order.created")
		status, out := h.call("/v1/webhooks/test/"+ep.id.String(), h.readWriteKey, nil)
		if status != http.StatusOK || out["status"] != "enqueued" {
			t.Fatalf("test: %d %v", status, out)
		}
		waitFor(t, 10*time.Second, "test delivery", func() bool { return rc.count() == 1 })
		d := rc.deliveries()[0]
		verify(t, d, ep.secret)
		if d.eventID() != "null" || d.eventType() != "webhook.test" || d.header.Get("X-PC-Delivery-Id") != out["delivery_id"] {
			t.Fatalf("test delivery headers %v, answer %v", d.header, out)
		}
		waitFor(t, 5*time.Second, "log", func() bool { return len(h.deliveries(ep.id)) == 1 })
		if row := h.deliveries(ep.id)[0]; row.ID.String() != out["delivery_id"] || row.Status != "succeeded" || row.WorkflowID != "webhook-test/"+row.ID.String() {
			t.Fatalf("test row %+v", row)
		}
	})

	t.Run("a dropped delivery is re-fired as a fresh chain", func(t *testing.T) {
		h.t = t
		rc := newReceiver(t, failFirst(2))
		ep := h.endpoint(rc, 2, "vendor.created")
		ev := h.emit("vendor.created")
		waitFor(t, 15*time.Second, "dropped", func() bool {
			rows := h.deliveries(ep.id)
			return len(rows) == 2 && rows[1].Status == "dropped"
		})
		dropped := h.deliveries(ep.id)[1]
		status, out := h.call("/admin/v1/deliveries/"+dropped.ID.String()+"/refire", h.ownerToken, nil)
		if status != http.StatusOK || out["workflow_id"] != contract.RefireWorkflowID(ev, ep.id, 1) {
			t.Fatalf("re-fire: %d %v", status, out)
		}
		waitFor(t, 10*time.Second, "re-fired delivery", func() bool { return len(h.deliveries(ep.id)) == 3 })
		row := h.deliveries(ep.id)[2]
		if row.Attempt != 1 || row.Status != "succeeded" || row.EventID != ev || row.ChainID.String() != out["chain_id"] || row.ChainID == dropped.ChainID {
			t.Fatalf("re-fired row %+v", row)
		}
		if d := rc.deliveries()[2]; d.eventID() != ev.String() || d.header.Get("X-PC-Delivery-Id") != row.ID.String() {
			t.Fatalf("re-fired request %v", d.header)
		}
	})

	t.Run("disabling an endpoint stops its chain at once", func(t *testing.T) {
		h.t = t
		rc := newReceiver(t, failFirst(100))
		ep := h.endpoint(rc, 5, "vendor.updated")
		// A chain whose next attempt is an hour away: only the stop signal can end it within the test.
		ev, err := deliverytest.Emit(h.ctx, h.db, h.org, nil, "vendor.updated", map[string]any{"id": uuid.New()})
		if err != nil {
			t.Fatal(err)
		}
		h.db.Model(&models.Event{}).Where("id = ?", ev).Update("dispatched_at", time.Now())
		_, err = h.temporal.ExecuteWorkflow(h.ctx, client.StartWorkflowOptions{ID: contract.EventWorkflowID(ev), TaskQueue: contract.TaskQueue},
			contract.EventWorkflowName, contract.EventParams{EventID: ev, OrgID: h.org, EventType: "vendor.updated", Schedule: []time.Duration{time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "first attempt logged", func() bool { return len(h.deliveries(ep.id)) == 1 })
		if status, out := h.call("/admin/v1/rpc/outbound_webhook_disable", h.ownerToken, map[string]any{"p_id": ep.id}); status != 200 {
			t.Fatalf("disable: %d %v", status, out)
		}
		rows := h.deliveries(ep.id)
		if rows[0].Status != "dropped" || rows[0].Error != "endpoint_disabled" || rows[0].NextAttemptAt != nil {
			t.Fatalf("last row after disabling %+v", rows[0])
		}
		// Waits for the workflow to end: an hour, unless the signal cut the wait short.
		// A dropped chain fails the workflow, with the result in the failure.
		err = h.temporal.GetWorkflow(h.ctx, contract.EventWorkflowID(ev), "").Get(h.ctx, nil)
		if res, dropped := contract.DroppedResult(err); !dropped || res.Status != contract.WorkflowDropped {
			t.Fatalf("workflow after disable: %v", err)
		}
		// Visibility lags the close; the replay subtest below lists finished workflows and needs this
		// one, the only unplanned event workflow.
		waitFor(t, 10*time.Second, "visibility", func() bool {
			return h.workflowsWith(fmt.Sprintf("WorkflowId = '%s' AND WdsDeliveryStatus = 'dropped' AND ExecutionStatus = 'Failed'",
				contract.EventWorkflowID(ev))) == 1
		})
		if rc.count() != 1 || len(h.deliveries(ep.id)) != 1 {
			t.Fatalf("disabled endpoint got %d requests, %d rows", rc.count(), len(h.deliveries(ep.id)))
		}
	})

	t.Run("every recorded history replays deterministically", func(t *testing.T) {
		h.t = t
		// A closed workflow reaches the cluster's visibility store a moment after it closes.
		var resp *workflowservice.ListWorkflowExecutionsResponse
		waitFor(t, 10*time.Second, "every workflow type among the closed workflows", func() bool {
			var err error
			resp, err = h.temporal.ListWorkflow(h.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "ExecutionStatus = 'Completed' OR ExecutionStatus = 'Failed'"})
			if err != nil {
				t.Fatal(err)
			}
			types := map[string]bool{}
			for _, ex := range resp.GetExecutions() {
				types[ex.GetType().GetName()] = true
			}
			return types[contract.EventWorkflowName] && types[contract.PlannedEventWorkflowName] &&
				types[contract.RefireWorkflowName] && types[contract.TestWorkflowName]
		})
		replayer := sdkworker.NewWorkflowReplayer()
		worker.RegisterWorkflows(replayer)
		names := map[string]int{}
		for _, ex := range resp.GetExecutions() {
			hist := &historypb.History{}
			iter := h.temporal.GetWorkflowHistory(h.ctx, ex.GetExecution().GetWorkflowId(), ex.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for iter.HasNext() {
				ev, err := iter.Next()
				if err != nil {
					t.Fatal(err)
				}
				hist.Events = append(hist.Events, ev)
			}
			if err := replayer.ReplayWorkflowHistory(nil, hist); err != nil {
				t.Errorf("%s does not replay: %v", ex.GetExecution().GetWorkflowId(), err)
			}
			names[ex.GetType().GetName()]++
		}
		if names[contract.EventWorkflowName] == 0 || names[contract.PlannedEventWorkflowName] == 0 ||
			names[contract.RefireWorkflowName] == 0 || names[contract.TestWorkflowName] == 0 {
			t.Fatalf("replayed %v; want every workflow type", names)
		}
	})

	t.Run("a worker stopped mid-chain resumes the chain on restart", func(t *testing.T) {
		h.t = t
		rc := newReceiver(t, failFirst(1))
		ep := h.endpoint(rc, 5, "shipment.tracking_added")
		wf := contract.EventWorkflowID(h.emit("shipment.tracking_added"))
		waitFor(t, 10*time.Second, "first attempt logged", func() bool { return len(h.deliveries(ep.id)) == 1 })
		waitFor(t, 10*time.Second, "the ladder's timer for attempt 2", func() bool {
			return h.historyHas(wf, enumspb.EVENT_TYPE_TIMER_STARTED)
		})
		h.stop()
		waitFor(t, 20*time.Second, "attempt 2 to fall due while no worker runs", func() bool {
			return h.historyHas(wf, enumspb.EVENT_TYPE_TIMER_FIRED)
		})
		if rc.count() != 1 {
			t.Fatalf("%d requests with no worker", rc.count())
		}
		h.startWorker()
		waitFor(t, 20*time.Second, "resumed attempt", func() bool { return rc.count() == 2 })
		waitFor(t, 5*time.Second, "log", func() bool { return len(h.deliveries(ep.id)) == 2 })
		if rows := h.deliveries(ep.id); rows[1].Status != "succeeded" || rows[1].Attempt != 2 {
			t.Fatalf("resumed row %+v", rows[1])
		}
	})
}

func TestWorkerRegistersMissingSearchAttributes(t *testing.T) {
	bin, err := temporaldev.FindBinary()
	if err != nil {
		t.Fatal(err)
	}
	// A bare dev server, as a production cluster starts: no custom search attributes.
	srv, err := testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{ExistingPath: bin, LogLevel: "error",
		ClientOptions: &client.Options{Logger: temporalclient.QuietLogger()},
		ExtraArgs:     []string{"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c := srv.Client()
	defer c.Close()
	for range 2 { // the second run finds them all and changes nothing
		if err := temporalclient.EnsureSearchAttributes(context.Background(), c.OperatorService(), "default", logrus.New()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.OperatorService().ListSearchAttributes(context.Background(), &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"WdsOrgId": "Keyword", "WdsEventId": "Keyword", "WdsEventType": "Keyword",
		"WdsDeliveryStatus": "Keyword", "WdsEndpointIds": "KeywordList", "WdsOrderNumber": "Int", "WdsOrderId": "Keyword"}
	for name, typ := range want {
		if got.GetCustomAttributes()[name].String() != typ {
			t.Errorf("%s registered as %v, want %s", name, got.GetCustomAttributes()[name], typ)
		}
	}
}

// countingTemporal records which workflow ids the starters actually started.
type countingTemporal struct {
	dispatch.WorkflowClient
	mu      sync.Mutex
	started map[string]int
}

func (c *countingTemporal) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	run, err := c.WorkflowClient.ExecuteWorkflow(ctx, o, wf, args...)
	if err == nil {
		c.mu.Lock()
		c.started[o.ID]++
		c.mu.Unlock()
	}
	return run, err
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTemporalOutageLosesNothingAndStartsNothingTwice(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	opts := temporaldev.Options{Port: port, DBFile: filepath.Join(dir, "temporal.db")}
	srv := startTemporal(t, opts)
	h := newHarness(t, srv.Client())
	recv := []*receiver{newReceiver(t, ok), newReceiver(t, ok)}
	eps := []endpoint{h.endpoint(recv[0], 5, "order.created"), h.endpoint(recv[1], 5, "order.created", "payment.recorded")}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}

	// Temporal is down: orders commit, their after-commit starts fail, nothing is lost.
	for i := range 5 {
		if status, out := h.order(fmt.Sprintf("outage-%d", i)); status != http.StatusCreated {
			t.Fatalf("order %d during the outage: %d %v", i, status, out)
		}
	}
	var undispatched int64
	h.db.Model(&models.EventState{}).Where("dispatched_at IS NULL").Count(&undispatched)
	if undispatched != 10 {
		t.Fatalf("%d undispatched events during the outage, want 10", undispatched)
	}

	// Temporal is back on the same address and state; two workers' relays race for the backlog.
	srv = startTemporal(t, opts)
	counted := &countingTemporal{WorkflowClient: srv.Client(), started: map[string]int{}}
	h.temporal = srv.Client()
	h.starter.Temporal = counted
	h.startWorker()
	h.startWorker()
	waitFor(t, 30*time.Second, "every event delivered", func() bool { return recv[0].count() == 5 && recv[1].count() == 10 })
	h.settled()
	for i, rc := range recv {
		seen := map[string]int{}
		for _, d := range rc.deliveries() {
			seen[d.eventID()]++
			verify(t, d, eps[i].secret)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("receiver %d got event %s %d times", i, id, n)
			}
		}
	}
	counted.mu.Lock()
	defer counted.mu.Unlock()
	ids := make([]string, 0, len(counted.started))
	for id, n := range counted.started {
		ids = append(ids, id)
		if n != 1 {
			t.Errorf("%s started %d times", id, n)
		}
	}
	sort.Strings(ids)
	if len(ids) != 10 {
		t.Fatalf("%d workflows started, want 10: %v", len(ids), ids)
	}
}
