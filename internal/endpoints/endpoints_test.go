package endpoints_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"wds/internal/deliverylog"
	"wds/internal/dispatch"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/events/eventstest"
	"wds/internal/outbox"
	"wds/internal/platform/egress/egresstest"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/resend"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/deliverytest"
	"wds/webhook"
	"wds/workflows/contract"
)

func TestCreateValidatesURLTypesAndAttempts(t *testing.T) {
	f := newFixture(t)
	strict := endpoints.NewService(f.DB, f.Box, endpoints.Options{})
	cases := []struct {
		name string
		svc  *endpoints.Service
		in   endpoints.CreateInput
		want error
	}{
		{"http refused", f.Svc, endpoints.CreateInput{URL: "http://example.com/hook"}, endpoints.ErrHTTPSRequired},
		{"ftp refused", f.Svc, endpoints.CreateInput{URL: "ftp://example.com/hook"}, endpoints.ErrHTTPSRequired},
		{"not a URL", f.Svc, endpoints.CreateInput{URL: "hook"}, problem.Invalid},
		{"credentials", f.Svc, endpoints.CreateInput{URL: "https://u:p@example.com/"}, problem.Invalid},
		{"loopback", strict, endpoints.CreateInput{URL: "https://127.0.0.1:8443/hook"}, endpoints.ErrURLNotAllowed},
		{"localhost", strict, endpoints.CreateInput{URL: "https://localhost/hook"}, endpoints.ErrURLNotAllowed},
		{"private", strict, endpoints.CreateInput{URL: "https://10.0.0.5/hook"}, endpoints.ErrURLNotAllowed},
		{"metadata", strict, endpoints.CreateInput{URL: "https://169.254.169.254/"}, endpoints.ErrURLNotAllowed},
		{"unknown type", f.Svc, endpoints.CreateInput{URL: "https://example.com/", EventTypes: []string{"order.exploded"}}, problem.Invalid},
		{"no types", f.Svc, endpoints.CreateInput{URL: "https://example.com/", EventTypes: []string{}}, problem.Invalid},
		{"max_attempts 11", f.Svc, endpoints.CreateInput{URL: "https://example.com/", MaxAttempts: 11}, problem.Invalid},
		{"max_attempts -1", f.Svc, endpoints.CreateInput{URL: "https://example.com/", MaxAttempts: -1}, problem.Invalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.OrgID, c.in.ActorID = f.Org, f.Owner
			if c.in.EventTypes == nil {
				c.in.EventTypes = []string{events.OrderCreated}
			}
			if _, err := c.svc.Create(f.Ctx, c.in); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
	// A public address passes the strict check (resolution is injected: tests do not need DNS).
	dns := &egresstest.Resolver{}
	dns.Set("hooks.example.com", "93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946")
	strict.Resolver = dns
	ep, err := strict.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: "HTTPS://hooks.example.com/in",
		EventTypes: []string{events.OrderCreated, events.OrderCreated, events.PaymentRecorded}, MaxAttempts: 10})
	if err != nil {
		t.Fatal(err)
	}
	if ep.URL != "https://hooks.example.com/in" || len(ep.EventTypes) != 2 || ep.MaxAttempts != 10 || !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("%+v", ep)
	}
}

func TestAtMostTenEnabledEndpointsEvenUnderConcurrentCreates(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	errs := make([]error, 15)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.Create(fmt.Sprintf("https://127.0.0.1/%d", i))
		}()
	}
	wg.Wait()
	ok, limited := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, endpoints.ErrEndpointLimit):
			limited++
		default:
			t.Fatalf("unexpected: %v", err)
		}
	}
	if ok != 10 || limited != 5 {
		t.Fatalf("%d created, %d refused; want 10 and 5", ok, limited)
	}
	// Disabling one makes room; enabling it again past the limit does not.
	eps, _ := f.Svc.List(f.Ctx, f.Org, nil)
	if _, err := f.Svc.Disable(f.Ctx, eps[0].ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Create("https://127.0.0.1/eleventh"); err != nil {
		t.Fatalf("room after disabling: %v", err)
	}
	if _, err := f.Svc.Enable(f.Ctx, eps[0].ID, f.Owner); !errors.Is(err, endpoints.ErrEndpointLimit) {
		t.Fatalf("enable past the limit: %v", err)
	}
}

func TestMembersListButDoNotManageAndEveryActionIsAuditedWithoutSecrets(t *testing.T) {
	f := newFixture(t)
	if _, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Member, URL: "https://127.0.0.1/", EventTypes: []string{events.OrderCreated}}); !errors.Is(err, workspace.ErrForbidden) {
		t.Fatalf("member create: %v", err)
	}
	ep, err := f.Create("https://127.0.0.1/hook")
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := f.Svc.List(f.Ctx, f.Org, &f.Member); err != nil || len(rows) != 1 {
		t.Fatalf("member list: %v %v", rows, err)
	}
	stranger := uuid.New()
	if _, err := f.Svc.List(f.Ctx, f.Org, &stranger); !errors.Is(err, problem.NotFound) {
		t.Fatalf("stranger list: %v", err)
	}
	for _, op := range []func(uuid.UUID, uuid.UUID) error{
		func(id, a uuid.UUID) error { _, err := f.Svc.Disable(f.Ctx, id, a); return err },
		func(id, a uuid.UUID) error { _, err := f.Svc.Enable(f.Ctx, id, a); return err },
		func(id, a uuid.UUID) error { _, err := f.Svc.RotateSecret(f.Ctx, id, a, 0); return err },
		func(id, a uuid.UUID) error { _, err := f.Svc.Delete(f.Ctx, id, a); return err },
	} {
		if err := op(ep.ID, f.Member); !errors.Is(err, workspace.ErrForbidden) {
			t.Fatalf("member mutation: %v", err)
		}
		if err := op(ep.ID, f.Owner); err != nil {
			t.Fatalf("owner mutation: %v", err)
		}
	}
	if rows, _ := f.Svc.List(f.Ctx, f.Org, nil); len(rows) != 0 {
		t.Fatalf("deleted endpoint still listed: %v", rows)
	}
	if _, err := f.Svc.Disable(f.Ctx, ep.ID, f.Owner); !errors.Is(err, problem.NotFound) {
		t.Fatalf("mutating a deleted endpoint: %v", err)
	}
	var audit []models.AuditEntry
	f.DB.Where("org_id = ?", f.Org).Order("created_at").Find(&audit)
	var actions []string
	for _, a := range audit {
		actions = append(actions, a.Action)
		if a.ActorID != f.Owner || a.TargetID != ep.ID {
			t.Errorf("audit row %+v", a)
		}
	}
	want := "webhook_endpoint.create webhook_endpoint.disable webhook_endpoint.enable webhook_endpoint.rotate_secret webhook_endpoint.delete"
	if strings.Join(actions, " ") != want {
		t.Fatalf("audit actions %v", actions)
	}
	var raw string
	f.DB.Raw("SELECT string_agg(details::text, ' ') FROM audit_log").Scan(&raw)
	if strings.Contains(raw, "whsec_") || strings.Contains(raw, ep.Secret) {
		t.Fatalf("audit details hold a secret: %s", raw)
	}
}

func TestRotateSecretReplacesTheSealedSecret(t *testing.T) {
	f := newFixture(t)
	ep, _ := f.Create("https://127.0.0.1/hook")
	rot, err := f.Svc.RotateSecret(f.Ctx, ep.ID, f.Owner, 0)
	if err != nil || rot.Secret == ep.Secret {
		t.Fatalf("%+v %v", rot, err)
	}
	var stored models.Endpoint
	f.DB.Where("id = ?", ep.ID).Take(&stored)
	plain, err := f.Box.Open(stored.SecretSealed)
	if err != nil || string(plain) != rot.Secret {
		t.Fatal("stored secret is not the rotated one")
	}
}

// subscribe creates an endpoint for order.created, so the org's order events have a receiver.
func (f *fixture) subscribe() {
	f.T.Helper()
	if _, err := f.Create("https://127.0.0.1/hook"); err != nil {
		f.T.Fatal(err)
	}
}

func TestListDeliveriesPagesWithoutGapsOrRepeats(t *testing.T) {
	f := newFixture(t)
	ep, _ := f.Create("https://127.0.0.1/hook")
	ev, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	at := time.Now().UTC().Truncate(time.Second)
	want := map[uuid.UUID]bool{}
	for i := range 7 {
		// pairs share a timestamp, so the id breaks ties
		want[f.Delivery(ev, ep.ID, 1, "failed", at.Add(time.Duration(i/2)*time.Second)).ID] = true
	}
	seen := map[uuid.UUID]bool{}
	var cur *paging.Cursor
	pages := 0
	for {
		p, err := f.Log.ListDeliveries(f.Ctx, deliverylog.DeliveriesQuery{EndpointID: ep.ID, Limit: 3, Cursor: cur, ActorID: &f.Member})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range p.Rows {
			if seen[r.ID] {
				t.Fatalf("row %s repeated", r.ID)
			}
			seen[r.ID] = true
		}
		if p.NextCursor == nil {
			break
		}
		cur = p.NextCursor
	}
	if pages != 3 || len(seen) != len(want) {
		t.Fatalf("%d pages, %d rows", pages, len(seen))
	}
}

func TestRefireQueuesAFreshChainOnlyForDroppedDeliveries(t *testing.T) {
	f := newFixture(t)
	ep, _ := f.Create("https://127.0.0.1/hook")
	ev, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	failed := f.Delivery(ev, ep.ID, 1, "failed", time.Now())
	dropped := f.Delivery(ev, ep.ID, 5, "dropped", time.Now())
	if _, err := f.Resends.Refire(f.Ctx, failed.ID, f.Owner); !errors.Is(err, resend.ErrDeliveryNotDropped) {
		t.Fatalf("re-fire of a failed delivery: %v", err)
	}
	if _, err := f.Resends.Refire(f.Ctx, dropped.ID, f.Member); !errors.Is(err, workspace.ErrForbidden) {
		t.Fatalf("member re-fire: %v", err)
	}
	if _, err := f.Resends.Refire(f.Ctx, uuid.New(), f.Owner); !errors.Is(err, problem.NotFound) {
		t.Fatalf("unknown delivery: %v", err)
	}
	first, err := f.Resends.Refire(f.Ctx, dropped.ID, f.Owner)
	if err != nil {
		t.Fatal(err)
	}
	if first.WorkflowID != contract.RefireWorkflowID(ev, ep.ID, 1) || first.ChainID == dropped.ChainID {
		t.Fatalf("re-fire: %+v", first)
	}
	// A double click answers the same chain; the re-fired chain's own dropped row is the next one.
	again, err := f.Resends.Refire(f.Ctx, dropped.ID, f.Owner)
	if err != nil || *again != *first {
		t.Fatalf("second re-fire of one delivery: %+v %v, want %+v", again, err, first)
	}
	droppedAgain := f.Delivery(ev, ep.ID, 5, "dropped", time.Now())
	next, err := f.Resends.Refire(f.Ctx, droppedAgain.ID, f.Owner)
	if err != nil || next.WorkflowID != contract.RefireWorkflowID(ev, ep.ID, 2) {
		t.Fatalf("re-fire of the re-fired chain's drop: %+v %v", next, err)
	}
	if _, err := f.Svc.Disable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Resends.Refire(f.Ctx, dropped.ID, f.Owner); !errors.Is(err, endpoints.ErrEndpointDisabled) {
		t.Fatalf("re-fire to a disabled endpoint: %v", err)
	}
}

func TestSendTestNeedsAnEnabledEndpointOfTheOrg(t *testing.T) {
	f := newFixture(t)
	ep, _ := f.Create("https://127.0.0.1/hook")
	if _, err := f.Resends.SendTest(f.Ctx, uuid.New(), ep.ID); !errors.Is(err, problem.NotFound) {
		t.Fatalf("other org: %v", err)
	}
	q, err := f.Resends.SendTest(f.Ctx, f.Org, ep.ID)
	if err != nil || q.Status != "enqueued" || q.EventType != "webhook.test" {
		t.Fatalf("%+v %v", q, err)
	}
	f.Svc.Disable(f.Ctx, ep.ID, f.Owner)
	if _, err := f.Resends.SendTest(f.Ctx, f.Org, ep.ID); !errors.Is(err, endpoints.ErrEndpointDisabled) {
		t.Fatalf("disabled: %v", err)
	}
}

// A test event is written by the outbox's one writer like every event, but born dispatched with a
// null id even when an endpoint subscribes to webhook.test: its own queued start delivers it, to the
// one endpoint tested, and the relay never fans it out.
func TestSendTestWritesItsEventThroughTheOutbox(t *testing.T) {
	f := newFixture(t)
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: "https://127.0.0.1/hook",
		EventTypes: []string{events.WebhookTest}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Resends.SendTest(f.Ctx, f.Org, ep.ID); err != nil {
		t.Fatal(err)
	}
	var rows []models.Event
	f.DB.Where("org_id = ? AND type = ?", f.Org, events.WebhookTest).Find(&rows)
	if len(rows) != 1 || rows[0].DispatchedAt == nil {
		t.Fatalf("%d test events, want one, dispatched", len(rows))
	}
	var body webhook.Event
	if err := json.Unmarshal(rows[0].Body, &body); err != nil || body.ID != nil || body.StoreID != nil ||
		body.Type != events.WebhookTest || body.OrgID != f.Org.String() || !body.CreatedAt.Equal(rows[0].CreatedAt) {
		t.Fatalf("test event body %s (%v), written at %v", rows[0].Body, err, rows[0].CreatedAt)
	}
	if types := eventstest.Written(t, f.DB); !slices.Contains(types, events.WebhookTest) {
		t.Fatalf("outbox types %v", types)
	}
}

// fakeTemporal counts starts per workflow id and rejects duplicates as the server does.
type fakeTemporal struct {
	mu      sync.Mutex
	starts  map[string]int
	down    bool
	options []client.StartWorkflowOptions
	names   []any
	args    [][]any
	signals []string
	// gate, when set, runs before each start answers: a slow Temporal.
	gate func()
}

func (t *fakeTemporal) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, name any, args ...any) (client.WorkflowRun, error) {
	if t.gate != nil {
		t.gate()
	}
	if err := ctx.Err(); err != nil { // as the client does when its caller's deadline passed
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.down {
		return nil, serviceerror.NewUnavailable("connection refused")
	}
	t.starts[o.ID]++
	t.options = append(t.options, o)
	t.names = append(t.names, name)
	t.args = append(t.args, args)
	if t.starts[o.ID] > 1 {
		return nil, serviceerror.NewWorkflowExecutionAlreadyStarted("already started", "", "")
	}
	return nil, nil
}

func (t *fakeTemporal) SignalWorkflow(_ context.Context, id, _, name string, arg any) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.signals = append(t.signals, fmt.Sprintf("%s %s %v", id, name, arg))
	return nil
}

func quiet() logrus.FieldLogger { l := logrus.New(); l.SetLevel(logrus.PanicLevel); return l }

func TestStarterStartsEachEventOnceWhateverTheRaces(t *testing.T) {
	f := newFixture(t)
	f.subscribe()
	tc := &fakeTemporal{starts: map[string]int{}, down: true}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet()}
	emit := func(n int) []uuid.UUID {
		var ids []uuid.UUID
		for range n {
			id, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
			ids = append(ids, id)
		}
		return ids
	}
	ids := emit(30)
	st.StartEvents(f.Ctx, ids[:5]) // Temporal is down: nothing is marked
	if n := f.undispatched(); n != 30 {
		t.Fatalf("%d undispatched after a failed start, want 30", n)
	}
	tc.mu.Lock()
	tc.down = false
	tc.mu.Unlock()

	// Relays racing each other: SKIP LOCKED gives each event to one of them.
	st = &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet()}
	relays(t, f, st, 4)
	if n := f.undispatched(); n != 0 {
		t.Fatalf("%d events left undispatched by the relays", n)
	}
	tc.startedOnce(t, ids)

	// Requests' after-commit starts racing relays: the relays leave events younger than their grace
	// to the request that committed them.
	fresh := emit(30)
	st = &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet(), Grace: time.Hour}
	againstRelays(t, f, st, fresh)
	if n := f.undispatched(); n != 0 {
		t.Fatalf("%d events left undispatched by the after-commit starts", n)
	}
	tc.startedOnce(t, fresh)

	// With no grace (a request slower than it), both may start an event: Temporal rejects the
	// second start, and either way the event is started and marked.
	racing := emit(30)
	st = &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet()}
	againstRelays(t, f, st, racing)
	if n := f.undispatched(); n != 0 {
		t.Fatalf("%d events left undispatched by racing starts", n)
	}
	tc.mu.Lock()
	for _, id := range racing {
		if tc.starts[contract.EventWorkflowID(id)] == 0 {
			t.Errorf("event %s marked but never started", id)
		}
	}
	tc.mu.Unlock()
	o := tc.options[0]
	if o.TaskQueue != contract.TaskQueue || o.WorkflowIDReusePolicy.String() != "RejectDuplicate" || !o.WorkflowExecutionErrorWhenAlreadyStarted {
		t.Fatalf("start options %+v", o)
	}
}

// againstRelays starts ids five at a time, as requests do after commit, while four relays run.
func againstRelays(t *testing.T, f *fixture, st *dispatch.Starter, ids []uuid.UUID) {
	var wg sync.WaitGroup
	wg.Go(func() { relays(t, f, st, 4) })
	for i := 0; i < len(ids); i += 5 {
		wg.Go(func() { st.StartEvents(f.Ctx, ids[i:i+5]) })
	}
	wg.Wait()
}

// relays runs n relays until each finds nothing left to start.
func relays(t *testing.T, f *fixture, st *dispatch.Starter, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				started, err := st.RelayOnce(f.Ctx, 4)
				if err != nil {
					t.Error(err)
					return
				}
				if started == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
}

// undispatched counts the events whose state row is not marked dispatched (models.EventState).
func (f *fixture) undispatched() int64 {
	var n int64
	f.DB.Model(&models.EventState{}).Where("dispatched_at IS NULL").Count(&n)
	return n
}

// startedOnce fails unless each event's workflow was started by exactly one call.
func (t *fakeTemporal) startedOnce(tb testing.TB, ids []uuid.UUID) {
	tb.Helper()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		if n := t.starts[contract.EventWorkflowID(id)]; n != 1 {
			tb.Fatalf("event %s started %d times", id, n)
		}
	}
}

func TestTheRelayTakesAnEventOnceItsGraceHasPassed(t *testing.T) {
	f := newFixture(t)
	f.subscribe()
	ev, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	tc := &fakeTemporal{starts: map[string]int{}}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet(), Grace: time.Minute}
	if n, err := st.RelayOnce(f.Ctx, 10); err != nil || n != 0 {
		t.Fatalf("relay took a fresh event: %d %v", n, err)
	}
	// The request that wrote it died before starting it: once the grace has passed, the relay does.
	// (The endpoint moves back too, so that it still predates the event it receives.)
	f.DB.Exec("UPDATE webhook_endpoints SET created_at = created_at - interval '1 hour'")
	f.DB.Exec("UPDATE events SET created_at = created_at - interval '61 seconds' WHERE id = ?", ev)
	if n, err := st.RelayOnce(f.Ctx, 10); err != nil || n != 1 {
		t.Fatalf("relay started %d after the grace: %v", n, err)
	}
	tc.startedOnce(t, []uuid.UUID{ev})
}

// While Temporal answers a relay's starts, the relay holds no lock or transaction: the row can be
// locked by anyone, and another relay skips it because of the lease.
func TestTheRelayHoldsNoLockWhileTemporalAnswers(t *testing.T) {
	f := newFixture(t)
	f.subscribe()
	ev, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	entered, proceed := make(chan struct{}), make(chan struct{})
	tc := &fakeTemporal{starts: map[string]int{}, gate: func() { entered <- struct{}{}; <-proceed }}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet()}
	done := make(chan error, 1)
	go func() { _, err := st.RelayOnce(f.Ctx, 10); done <- err }()
	<-entered
	if err := f.DB.Exec("SELECT 1 FROM events WHERE id = ? FOR UPDATE NOWAIT", ev).Error; err != nil {
		t.Fatalf("the event's row is locked while its start is in flight: %v", err)
	}
	other := &dispatch.Starter{DB: f.DB, Temporal: &fakeTemporal{starts: map[string]int{}}, Schedule: []time.Duration{time.Second}, Log: quiet()}
	if n, err := other.RelayOnce(f.Ctx, 10); err != nil || n != 0 {
		t.Fatalf("another relay started %d leased events: %v", n, err)
	}
	close(proceed)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tc.startedOnce(t, []uuid.UUID{ev})
	if n := f.undispatched(); n != 0 {
		t.Fatalf("%d undispatched after the start", n)
	}
}

func TestAnAlreadyStartedWorkflowCountsAsDispatched(t *testing.T) {
	f := newFixture(t)
	f.subscribe()
	ev, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	tc := &fakeTemporal{starts: map[string]int{contract.EventWorkflowID(ev): 1}}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet()}
	if n, err := st.RelayOnce(f.Ctx, 10); err != nil || n != 1 {
		t.Fatalf("%d %v", n, err)
	}
	var e models.EventState
	f.DB.Where("event_id = ?", ev).Take(&e)
	if e.DispatchedAt == nil {
		t.Fatal("event crashed between start and mark stays undispatched forever")
	}
}

// queueBoth queues a test event and a re-fire of a dropped delivery of a new event.
func queueBoth(t *testing.T, f *fixture) (*resend.TestQueued, *resend.Refired) {
	t.Helper()
	ep, _ := f.Create("https://127.0.0.1/hook")
	q, _ := f.Resends.SendTest(f.Ctx, f.Org, ep.ID)
	ev, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	d := f.Delivery(ev, ep.ID, 5, "dropped", time.Now())
	r, err := f.Resends.Refire(f.Ctx, d.ID, f.Owner)
	if err != nil {
		t.Fatal(err)
	}
	return q, r
}

func TestQueuedRefiresAndTestsAreStartedByTheRelay(t *testing.T) {
	f := newFixture(t)
	q, r := queueBoth(t, f)
	// The re-fired event's attempt marked it dispatched; a fresh event is the relay's to start.
	ev, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	tc := &fakeTemporal{starts: map[string]int{}}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet()}
	if n, err := st.RelayOnce(f.Ctx, 10); err != nil || n != 3 {
		t.Fatalf("relay started %d: %v", n, err)
	}
	for _, id := range []string{contract.TestWorkflowID(q.DeliveryID), r.WorkflowID, contract.EventWorkflowID(ev)} {
		if tc.starts[id] != 1 {
			t.Fatalf("%s started %d times (%v)", id, tc.starts[id], tc.starts)
		}
	}
	if n, _ := st.RelayOnce(f.Ctx, 10); n != 0 {
		t.Fatalf("second relay pass started %d", n)
	}
}

func TestAnOperatorsQueuedStartsAreStartedAfterCommitAndLeftAloneByTheRelay(t *testing.T) {
	f := newFixture(t)
	q, r := queueBoth(t, f)
	tc := &fakeTemporal{starts: map[string]int{}}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet(), Grace: time.Hour}
	if n, err := st.RelayOnce(f.Ctx, 10); err != nil || n != 0 {
		t.Fatalf("relay took fresh rows: %d %v", n, err)
	}
	st.StartDispatches(f.Ctx, q.DispatchID, r.DispatchID)
	for _, id := range []string{contract.TestWorkflowID(q.DeliveryID), r.WorkflowID} {
		if tc.starts[id] != 1 {
			t.Fatalf("%s started %d times (%v)", id, tc.starts[id], tc.starts)
		}
	}
	var left int64
	f.DB.Table("webhook_dispatches").Where("dispatched_at IS NULL").Count(&left)
	if left != 0 {
		t.Fatalf("%d queued starts left unmarked", left)
	}
}

func TestDisablingSignalsTheWorkflowsOfTheDroppedChainsAfterCommit(t *testing.T) {
	f := newFixture(t)
	tc := &fakeTemporal{starts: map[string]int{}}
	f.Svc.Stopper = &dispatch.Starter{DB: f.DB, Temporal: tc, Log: quiet()}
	ep, _ := f.Create("https://127.0.0.1/hook")
	ev, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	pending := f.Delivery(ev, ep.ID, 1, "failed", time.Now())
	f.DB.Model(&pending).Update("next_attempt_at", time.Now().Add(time.Hour))
	f.Delivery(ev, ep.ID, 1, "succeeded", time.Now()) // a finished chain is not signalled
	if _, err := f.Svc.Disable(f.Ctx, ep.ID, f.Member); !errors.Is(err, workspace.ErrForbidden) || len(tc.signals) != 0 {
		t.Fatalf("refused disable signalled: %v %v", err, tc.signals)
	}
	if _, err := f.Svc.Disable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s %s %s", pending.WorkflowID, contract.SignalEndpointStopped, ep.ID)
	if len(tc.signals) != 1 || tc.signals[0] != want {
		t.Fatalf("signals %v, want [%s]", tc.signals, want)
	}
	var row models.Delivery
	f.DB.Where("id = ?", pending.ID).Take(&row)
	if row.Status != "dropped" || row.Error != models.ReasonEndpointDisabled || row.NextAttemptAt != nil {
		t.Fatalf("pending row after disable: %+v", row)
	}
}

// An event no endpoint is subscribed to when it fires (none for its type, or none at all) is written
// already dispatched, and Write returns, in emission order, only the ids an endpoint can receive.
func TestEventsWithoutReceiversAreWrittenDispatched(t *testing.T) {
	f := newFixture(t)
	lonely, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	f.subscribe()
	var evs []outbox.PendingEvent
	for _, typ := range []string{events.OrderCreated, events.ClientCreated, events.OrderCreated} {
		ev, err := outbox.NewEvent(f.Org, nil, typ, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	targeted, err := outbox.WriteEvents(f.Ctx, f.DB, evs)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uuid.UUID{evs[0].ID, evs[2].ID}; !slices.Equal(targeted, want) {
		t.Fatalf("Write returned %v, want %v", targeted, want)
	}
	for id, want := range map[uuid.UUID]bool{lonely: true, evs[0].ID: false, evs[1].ID: true, evs[2].ID: false} {
		var e models.Event
		f.DB.Where("id = ?", id).Take(&e)
		if got := e.DispatchedAt != nil; got != want {
			t.Fatalf("event %s (%s) dispatched %v, want %v", id, e.Type, got, want)
		}
	}
}

// The starter plans an event's chains: the enabled endpoints subscribed at event time, oldest first,
// each with its own chain and first delivery ids, and their ids as WdsEndpointIds at start. A disabled
// endpoint gets no chain; an event whose subscribed endpoints are all disabled starts unplanned.
func TestStarterPlansTheChainsOfAnEvent(t *testing.T) {
	f := newFixture(t)
	first, err := f.Create("https://127.0.0.1/first")
	if err != nil {
		t.Fatal(err)
	}
	second, _ := f.Create("https://127.0.0.1/second")
	disabled, _ := f.Create("https://127.0.0.1/disabled")
	if _, err := f.Svc.Disable(f.Ctx, disabled.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	ev, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	tc := &fakeTemporal{starts: map[string]int{}}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet()}
	st.StartEvents(f.Ctx, []uuid.UUID{ev})
	if len(tc.args) != 1 {
		t.Fatalf("%d starts, want 1", len(tc.args))
	}
	p := tc.args[0][0].(contract.EventParams)
	if tc.names[0] != contract.PlannedEventWorkflowName {
		t.Fatalf("planned event started as %v", tc.names[0])
	}
	if len(p.Chains) != 2 || p.Chains[0].EndpointID != first.ID || p.Chains[1].EndpointID != second.ID ||
		p.Chains[0].URL != "https://127.0.0.1/first" || p.Chains[0].MaxAttempts != first.MaxAttempts {
		t.Fatalf("planned chains %+v, want the first and second endpoints", p.Chains)
	}
	c0, c1 := p.Chains[0], p.Chains[1]
	if c0.ChainID == uuid.Nil || c0.FirstDeliveryID == uuid.Nil || c0.ChainID == c1.ChainID || c0.FirstDeliveryID == c1.FirstDeliveryID {
		t.Fatalf("chain ids %+v %+v", c0, c1)
	}
	ids, _ := tc.options[0].TypedSearchAttributes.GetKeywordList(contract.AttrEndpointIDs)
	if !slices.Equal(ids, []string{first.ID.String(), second.ID.String()}) {
		t.Fatalf("WdsEndpointIds at start %v", ids)
	}
	for _, ep := range []uuid.UUID{first.ID, second.ID} {
		if _, err := f.Svc.Disable(f.Ctx, ep, f.Owner); err != nil {
			t.Fatal(err)
		}
	}
	unplanned, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	st.StartEvents(f.Ctx, []uuid.UUID{unplanned})
	if p := tc.args[1][0].(contract.EventParams); len(tc.args) != 2 || len(p.Chains) != 0 || tc.names[1] != contract.EventWorkflowName ||
		tc.options[1].TypedSearchAttributes.ContainsKey(contract.AttrEndpointIDs) {
		t.Fatalf("an event with only disabled endpoints started planned: %+v", p)
	}
}

// An event whose only receiver was deleted before the start is marked dispatched without a workflow;
// one with a receiver is started.
func TestEventsWhoseReceiverWentAwayStartNoWorkflow(t *testing.T) {
	f := newFixture(t)
	gone, err := f.Create("https://127.0.0.1/gone")
	if err != nil {
		t.Fatal(err)
	}
	orphan, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	if _, err := f.Svc.Delete(f.Ctx, gone.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	f.subscribe()
	wanted, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	tc := &fakeTemporal{starts: map[string]int{}}
	st := &dispatch.Starter{DB: f.DB, Temporal: tc, Schedule: []time.Duration{time.Second}, Log: quiet()}
	st.StartEvents(f.Ctx, []uuid.UUID{orphan, wanted})
	if undispatched := f.undispatched(); undispatched != 0 {
		t.Fatalf("%d events left undispatched", undispatched)
	}
	if len(tc.starts) != 1 || tc.starts[contract.EventWorkflowID(wanted)] != 1 {
		t.Fatalf("started %v, want only the event with a subscribed endpoint", tc.starts)
	}
}

// Ten concurrent re-fires of one dropped delivery (an impatient operator) queue one chain.
func TestConcurrentRefiresOfOneDeliveryQueueOneChain(t *testing.T) {
	f := newFixture(t)
	ep, _ := f.Create("https://127.0.0.1/hook")
	ev, _ := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
	dropped := f.Delivery(ev, ep.ID, 5, "dropped", time.Now())
	var wg sync.WaitGroup
	chains := make(chan uuid.UUID, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := f.Resends.Refire(f.Ctx, dropped.ID, f.Owner)
			if err != nil {
				t.Error(err)
				return
			}
			chains <- r.ChainID
		}()
	}
	wg.Wait()
	close(chains)
	var distinct []uuid.UUID
	for c := range chains {
		if !slices.Contains(distinct, c) {
			distinct = append(distinct, c)
		}
	}
	var queued int64
	f.DB.Model(&models.Dispatch{}).Where("refired_delivery_id = ?", dropped.ID).Count(&queued)
	if len(distinct) != 1 || queued != 1 {
		t.Fatalf("%d chains answered, %d queued; want 1 and 1", len(distinct), queued)
	}
}

// An event written while an endpoint's creation has stamped its created_at but not yet committed
// waits for that commit and goes to the endpoint: the endpoint was created before it.
func TestAnEventDoesNotMissAnEndpointBeingCreated(t *testing.T) {
	f := newFixture(t)
	// Hold the owner's row so the creation's insert stops at its foreign-key check, after created_at.
	hold := f.DB.Begin()
	defer hold.Rollback()
	if err := hold.Exec("SELECT 1 FROM users WHERE id = ? FOR UPDATE", f.Owner).Error; err != nil {
		t.Fatal(err)
	}
	created := make(chan *endpoints.Created, 1)
	go func() {
		ep, err := f.Create("https://127.0.0.1/hook")
		if err != nil {
			t.Error(err)
		}
		created <- ep
	}()
	waitForLockWaiters(t, f, 1)
	emitted := make(chan uuid.UUID, 1)
	var wrote atomic.Bool
	go func() {
		id, err := deliverytest.Emit(f.Ctx, f.DB, f.Org, nil, events.OrderCreated, nil)
		if err != nil {
			t.Error(err)
		}
		wrote.Store(true)
		emitted <- id
	}()
	// The event's write has either committed (the bug this test catches) or waits behind the creation.
	waitFor(t, "the event's write to commit or wait for a lock", func() bool {
		return wrote.Load() || lockWaiters(f) >= 2
	})
	hold.Rollback()
	ep, id := <-created, <-emitted
	var row struct {
		Targeted           bool
		EventAt, CreatedAt time.Time
	}
	f.DB.Raw(`SELECT e.dispatched_at IS NULL AS targeted, e.created_at AS event_at, w.created_at
		FROM events e, webhook_endpoints w WHERE e.id = ? AND w.id = ?`, id, ep.Endpoint.ID).Scan(&row)
	if !row.Targeted || !row.CreatedAt.Before(row.EventAt) {
		t.Fatalf("endpoint created at %v, event at %v, targeted %v: the event must go to the endpoint",
			row.CreatedAt, row.EventAt, row.Targeted)
	}
}

// waitForLockWaiters waits until n backends wait for a lock.
func waitForLockWaiters(t *testing.T, f *fixture, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d backends waiting for a lock", n), func() bool { return lockWaiters(f) >= n })
}

// lockWaiters counts the test database's backends waiting for a lock.
func lockWaiters(f *fixture) int {
	var waiting int
	f.DB.Raw("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&waiting)
	return waiting
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}
