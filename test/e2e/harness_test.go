// Package e2e drives the webhook engine end to end: a real Temporal dev server (bin/temporal), real
// PostgreSQL, the real HTTP API and worker, and real TLS receivers, with a shortened retry schedule.
package e2e

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"wds/activities"
	"wds/api"
	"wds/api/console"
	"wds/internal/apikeys"
	"wds/internal/dev/temporaldev"
	"wds/internal/dispatch"
	"wds/internal/endpoints"
	"wds/internal/eventsearch"
	"wds/internal/platform/config"
	"wds/internal/platform/egress"
	"wds/internal/platform/secrets"
	"wds/internal/recovery"
	"wds/internal/resend"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
	"wds/test/pgtest"
	"wds/worker"
	"wds/workflows/contract"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// schedule is the shortened ladder: attempt 2 at +1 s, attempt 3 at +2 s, then every 2 s.
var schedule = []time.Duration{time.Second, 2 * time.Second}

// harness is one running system: database, Temporal, API, worker.
type harness struct {
	t        *testing.T
	ctx      context.Context
	db       *gorm.DB
	box      *secrets.Box
	temporal client.Client
	starter  *dispatch.Starter
	api      *httptest.Server
	caFile   string
	log      *logrus.Logger

	mu      sync.Mutex
	workers []func()

	// retention is the workers' WDS_RETENTION; 0 keeps everything.
	retention time.Duration
	// maxActivities bounds each worker's concurrent activities; 0 is the SDK's default.
	maxActivities int
	// manualSlots is the workers' WDS_MANUAL_ACTIVITIES; 0 is the default.
	manualSlots int
	// disableAfter is the workers' WDS_WEBHOOK_DISABLE_AFTER; 0 never disables an endpoint.
	disableAfter time.Duration

	org, store, owner uuid.UUID
	ownerToken        string
	readWriteKey      string
	integrationKey    string
}

// newHarness builds the API and the console over a fresh database; opts adjust the console.
func newHarness(t *testing.T, tc client.Client, opts ...func(*console.Console)) *harness {
	t.Helper()
	ctx := context.Background()
	log := logrus.New()
	log.SetOutput(io.Discard)
	h := &harness{t: t, ctx: ctx, db: pgtest.New(t), temporal: tc, log: log, caFile: receiverCAFile(t)}
	h.box, _ = secrets.NewBox(secrets.GenerateKey())
	h.starter = &dispatch.Starter{DB: h.db, Temporal: tc, Schedule: schedule, Log: log}
	hooks := endpoints.NewService(h.db, h.box, endpoints.Options{AllowPrivate: true, Stopper: h.starter})
	recoveries := recovery.NewService(h.db, h.starter, 0)
	d := apitest.Domain(h.db, h.box, h.starter)
	router, err := api.NewRouter(api.Deps{Services: api.NewServices(h.db, d), Log: log, Dispatches: h.starter,
		Webhooks: hooks, Events: eventsearch.NewService(h.db, h.box, nil), Resends: resend.NewService(h.db, h.starter), Recoveries: recoveries})
	if err != nil {
		t.Fatal(err)
	}
	con := &console.Console{DB: h.db, Log: log, Members: d.People, Sessions: d.People, Keys: d.Keys, KeyLists: d.KeyLists, Audit: d.Audit, Deliveries: d.Deliveries, Events: eventsearch.NewService(h.db, h.box, nil), Resends: resend.NewService(h.db, h.starter),
		Shipping: d.Shipping, Vendors: d.Vendors, Clients: d.Orders,
		Webhooks: hooks, Recoveries: recoveries, Dispatches: h.starter,
		TemporalUI: "http://localhost:8233", Namespace: "default", RetrySchedule: schedule, InsecureCookie: true}
	for _, o := range opts {
		o(con)
	}
	con.Register(router)
	h.api = httptest.NewServer(router)
	t.Cleanup(h.api.Close)
	h.workspace()
	return h
}

// workspace makes an org with a store, an owner with an operator token, and keys.
func (h *harness) workspace() {
	t := h.t
	org, err := workspace.NewService(h.db).CreateOrg(h.ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	store, err := workspace.NewService(h.db).CreateStore(h.ctx, org.ID, "Main", "USD")
	if err != nil {
		t.Fatal(err)
	}
	owner, token, err := workspace.NewService(h.db).CreateUser(h.ctx, org.ID, "owner@acme.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	_, rw, err := apikeys.NewService(h.db, nil).CreateReadKey(h.ctx, apikeys.NewReadKey{OrgID: org.ID, ActorID: owner.ID, Scope: models.ScopeReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	ik, err := apikeys.NewService(h.db, h.box).CreateIntegrationKey(h.ctx, apikeys.NewIntegrationKey{OrgID: org.ID, StoreID: store.ID, ActorID: owner.ID,
		Scopes: []string{"orders:write", "payments:write"}})
	if err != nil {
		t.Fatal(err)
	}
	h.org, h.store, h.owner, h.ownerToken, h.readWriteKey, h.integrationKey = org.ID, store.ID, owner.ID, token, rw, ik.Plaintext
}

// startWorker runs one more worker (Temporal worker and relay) until stop or the test's end.
func (h *harness) startWorker() {
	h.t.Helper()
	httpc, err := egress.NewClient(egress.Options{AllowPrivate: true, CAFiles: []string{h.caFile}})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() {
		done <- worker.Serve(ctx, worker.Options{Temporal: h.temporal, Starter: h.starter, Log: h.log, RelayInterval: 100 * time.Millisecond,
			Activities: &activities.Activities{DB: h.db, Box: h.box, HTTP: httpc, Batches: h.starter, Events: h.starter,
				DisableAfter: h.disableAfter}, Retention: h.retention,
			MaxConcurrentActivities: h.maxActivities, ManualSlots: h.manualSlots,
			Deployment: worker.Deployment{Name: "wds", BuildID: "e2e", Promote: config.PromoteFirst}})
	}()
	t := h.t
	h.mu.Lock()
	h.workers = append(h.workers, func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	h.mu.Unlock()
	t.Cleanup(h.stop)
}

// stop stops every running worker, gracefully, as SIGTERM does.
func (h *harness) stop() {
	h.mu.Lock()
	workers := h.workers
	h.workers = nil
	h.mu.Unlock()
	for _, stop := range workers {
		stop()
	}
}

// receiverCAFile writes the httptest TLS certificate (the same for every httptest server) as the
// extra CA bundle, the way WDS_WEBHOOK_CA_FILE trusts a staging receiver.
func receiverCAFile(t *testing.T) string {
	t.Helper()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "receivers.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(file, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// startTemporal runs a dev server for one test.
func startTemporal(t *testing.T, o temporaldev.Options) *temporaldev.Server {
	t.Helper()
	srv, err := temporaldev.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// deliveries returns the endpoint's log, oldest attempt first.
func (h *harness) deliveries(endpointID uuid.UUID) []models.Delivery {
	var rows []models.Delivery
	if err := h.db.Where("endpoint_id = ?", endpointID).Order("attempted_at, attempt").Find(&rows).Error; err != nil {
		h.t.Fatal(err)
	}
	return rows
}

// settled waits until every workflow started for the org's events and queued starts has closed.
// After it no delivery can still arrive, so a count taken then is final: no quiet window is guessed.
func (h *harness) settled() {
	h.t.Helper()
	waitFor(h.t, 60*time.Second, "every delivery workflow of the org to close", func() bool {
		var pending int64
		h.db.Raw(`SELECT (SELECT count(*) FROM event_states WHERE org_id = ? AND dispatched_at IS NULL) +
			(SELECT count(*) FROM webhook_dispatches WHERE org_id = ? AND dispatched_at IS NULL)`, h.org, h.org).Scan(&pending)
		if pending > 0 {
			return false
		}
		var events []uuid.UUID
		var ids []string
		h.db.Raw("SELECT id FROM events WHERE org_id = ?", h.org).Scan(&events)
		h.db.Raw("SELECT workflow_id FROM webhook_dispatches WHERE org_id = ?", h.org).Scan(&ids)
		for _, id := range events {
			ids = append(ids, contract.EventWorkflowID(id))
		}
		return !slices.ContainsFunc(ids, h.running)
	})
}

// running tells whether the workflow is open. An event that targeted no endpoint has none.
func (h *harness) running(workflowID string) bool {
	h.t.Helper()
	d, err := h.temporal.DescribeWorkflowExecution(h.ctx, workflowID, "")
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return false
	}
	if err != nil {
		h.t.Fatalf("describe %s: %v", workflowID, err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING
}

// history is the latest run's history of the workflow, every event, as the server keeps it.
func (h *harness) history(workflowID string) []*historypb.HistoryEvent {
	h.t.Helper()
	var events []*historypb.HistoryEvent
	it := h.temporal.GetWorkflowHistory(h.ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			h.t.Fatalf("history of %s: %v", workflowID, err)
		}
		events = append(events, ev)
	}
	return events
}

// historyCount counts the events of the type in the workflow's history.
func (h *harness) historyCount(workflowID string, typ enums.EventType) int {
	h.t.Helper()
	n := 0
	for _, ev := range h.history(workflowID) {
		if ev.GetEventType() == typ {
			n++
		}
	}
	return n
}

// historyHas tells whether the workflow's history holds an event of the type: the server's record,
// so a test can tell a durable timer was started, or has fired, without any worker running.
func (h *harness) historyHas(workflowID string, typ enums.EventType) bool {
	h.t.Helper()
	return h.historyCount(workflowID, typ) > 0
}
