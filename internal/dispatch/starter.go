package dispatch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wds/internal/outbox"
	"wds/internal/platform/config"
	"wds/internal/platform/egress"
	"wds/internal/platform/temporalclient"
	"wds/models"
	"wds/workflows/contract"
)

// design is the delivery code's version every workflow this starter starts runs, without asking
// workflow.GetVersion (contract.EventParams.Design).
const design = contract.CurrentDesign

// WorkflowClient is the part of the Temporal client that starts and signals workflows.
type WorkflowClient interface {
	ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
}

// Starter starts delivery workflows for committed events and queued re-fires and tests, then marks
// them dispatched. Relays claim rows with FOR UPDATE SKIP LOCKED, so any number of them never wait
// for each other; the API's after-commit start of its own events claims nothing and the relay leaves
// them to it for a grace period. Workflow ids derive from the row and duplicates are rejected by
// Temporal, so a second start of the same row (a crash between start and mark) is harmless.
type Starter struct {
	DB       *gorm.DB
	Temporal WorkflowClient
	// Schedule is the retry ladder given to workflows started now.
	Schedule []time.Duration
	Log      logrus.FieldLogger
	// Grace is how old an event or queued start must be before the relay takes it: younger ones are
	// the API's after-commit start's, which claims nothing. Zero takes every row at once.
	Grace time.Duration
	// Namespace is the Temporal namespace, named in the commands a missing attribute's warning gives.
	Namespace string

	mu          sync.Mutex
	pausedUntil time.Time
	// optionalAttrs remembers that the namespace lacks the order's search attributes.
	optionalAttrs temporalclient.OptionalAttrs
}

// startTimeout bounds one start call, so an unreachable Temporal fails fast and the relay retries.
const startTimeout = 5 * time.Second

// An after-commit start delays the caller's response, so it gets a shorter budget, and after a
// failure such starts are skipped for a while: during a Temporal outage one request in each pause
// waits, the others answer at once and leave their events to the relay.
const (
	immediateTimeout = 2 * time.Second
	immediatePause   = 5 * time.Second
)

// RelayGrace is the relay's Grace in wds: over twice the after-commit start's budget, so that the
// relay does not start again what a request is still starting, while rows a request could not start
// (Temporal away, immediate starts paused) wait only seconds longer than they would for the relay
// alone. Event times come from the API's clock and the grace from the database's: instances need NTP,
// as the rate limiter does.
const RelayGrace = 5 * time.Second

// StartEvents tries to start the given committed events at once. Failures are left to the relay.
// Events no endpoint can receive are marked without a workflow; WriteEvents already returns only
// the others.
func (s *Starter) StartEvents(ctx context.Context, eventIDs []uuid.UUID) {
	if len(eventIDs) == 0 {
		return
	}
	read := func(db *gorm.DB, rows *[]eventRow) error {
		return undispatchedEvents(db).Where("events.id IN ?", eventIDs).Find(rows).Error
	}
	s.immediately(ctx, func(ctx context.Context) error { return startNow(ctx, s.DB, outbox.Events, read, s.startRows) })
}

// StartDispatches tries to start the given queued re-fires and tests at once.
func (s *Starter) StartDispatches(ctx context.Context, dispatchIDs ...uuid.UUID) {
	if len(dispatchIDs) == 0 {
		return
	}
	s.immediately(ctx, func(ctx context.Context) error {
		return startNow(ctx, s.DB, queued, queuedByID(dispatchIDs), s.startDispatchRows)
	})
}

// queuedByID reads the given queued starts that are not started yet.
func queuedByID(dispatchIDs []uuid.UUID) func(*gorm.DB, *[]dispatchRow) error {
	return func(db *gorm.DB, rows *[]dispatchRow) error {
		return queuedStarts(db).Where("d.id IN ?", dispatchIDs).Find(rows).Error
	}
}

// StartBatch starts the chains a recovery batch queued, spread evenly over spread (the time the
// batch's chains stand for at the recovery's pace), and returns once spread has passed: a second's
// chains started at once would be a burst every second that other orgs' requests queue behind. A batch runs in an activity, not a
// request: it has the activity's deadline instead of the after-commit budget, keeps up to
// batchStarts starts in flight so a slow Temporal answer does not hold up the rest, and a failure
// does not pause the after-commit starts. What it cannot start the relay starts after its grace.
func (s *Starter) StartBatch(ctx context.Context, dispatchIDs []uuid.UUID, spread time.Duration) {
	begin := time.Now()
	start := func(ctx context.Context, rows []dispatchRow) ([]uuid.UUID, error) {
		due := make(map[uuid.UUID]time.Time, len(rows))
		for i, r := range rows {
			due[r.ID] = begin.Add(spread * time.Duration(i) / time.Duration(len(rows)))
		}
		return startConcurrently(ctx, rows, func(ctx context.Context, r dispatchRow) error {
			if err := sleepUntil(ctx, due[r.ID]); err != nil {
				return err
			}
			return s.startDispatch(ctx, r)
		})
	}
	if err := startNow(ctx, s.DB, queued, queuedByID(dispatchIDs), start); err != nil {
		s.Log.WithError(err).Warn("recovery chains left to the relay")
	}
	_ = sleepUntil(ctx, begin.Add(spread)) // cut short only when the activity is
}

// sleepUntil waits until t, or fails with ctx's error when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// StopChains signals the workflows of an endpoint's dropped chains so they end now rather than at
// their next due time. A workflow that already ended, or a Temporal that cannot be reached, changes
// nothing: the chain's row is dropped and its next attempt stops without sending.
func (s *Starter) StopChains(ctx context.Context, endpointID uuid.UUID, workflowIDs []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), immediateTimeout)
	defer cancel()
	for _, id := range workflowIDs {
		if err := s.Temporal.SignalWorkflow(ctx, id, "", contract.SignalEndpointStopped, endpointID); err != nil {
			s.Log.WithError(err).WithField("workflow_id", id).Debug("stop signal not delivered")
		}
	}
}

func (s *Starter) immediately(ctx context.Context, start func(context.Context) error) {
	s.mu.Lock()
	paused := time.Now().Before(s.pausedUntil)
	s.mu.Unlock()
	if paused {
		return
	}
	// Not cut short by the caller going away: the rows are committed and worth starting now.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), immediateTimeout)
	defer cancel()
	if err := start(ctx); err != nil {
		s.mu.Lock()
		s.pausedUntil = time.Now().Add(immediatePause)
		s.mu.Unlock()
		s.Log.WithError(err).Warn("webhook start deferred to the relay")
	}
}

// RelayOnce starts up to limit undispatched events, up to limit queued manual starts and up to limit
// unstarted recoveries, oldest first, and reports how many it started.
func (s *Starter) RelayOnce(ctx context.Context, limit int) (int, error) {
	n, err := s.claimEvents(ctx, limit)
	if err != nil {
		return n, err
	}
	m, err := s.claimDispatches(ctx, limit)
	if err != nil {
		return n + m, err
	}
	r, err := s.claimRecoveries(ctx, limit)
	return n + m + r, err
}

type eventRow struct {
	ID    uuid.UUID
	OrgID uuid.UUID
	Type  string
	// Targeted is false when no endpoint can receive the event (its receiver was deleted after the
	// event was written, or it was written without the outbox's check): it is marked dispatched with
	// no workflow.
	Targeted bool
	// Targets are the enabled endpoints it goes to, as a JSON array of Target, or null.
	Targets []byte
	Order   orderRef `gorm:"embedded"`
}

// orderRef is the order an event is about, if it is about one.
type orderRef struct {
	OrderID     *uuid.UUID
	OrderNumber *int64
}

// orderColumns read the order of the event table (or alias) e.
func orderColumns(e string) string {
	return e + ".order_id, (SELECT r.number FROM orders r WHERE r.id = " + e + ".order_id) AS order_number"
}

// claimColumns read an event row and decide its targets in the claim itself, so the workflow need not.
var claimColumns = "events.id, events.org_id, events.type, " + orderColumns("events") + ", EXISTS (SELECT 1 FROM webhook_endpoints w WHERE " +
	outbox.SubscribedAtEventTime("events.org_id", "events.type", "events.created_at") + ") AS targeted, " +
	"(SELECT json_agg(json_build_object('EndpointID', w.id, 'URL', w.url, 'MaxAttempts', w.max_attempts) ORDER BY " +
	outbox.TargetOrder + ") FROM webhook_endpoints w WHERE " +
	outbox.DeliversAtEventTime("events.org_id", "events.type", "events.created_at") + ") AS targets"

// undispatchedEvents selects events not yet started, oldest first, with their targets: a walk of
// their state rows' queue (event_states_undispatched), each joined to its event.
func undispatchedEvents(db *gorm.DB) *gorm.DB {
	return db.Model(&models.Event{}).Select(claimColumns).Joins("JOIN event_states s ON s.event_id = events.id").
		Where("s.dispatched_at IS NULL").Order("s.created_at, s.event_id")
}

// claimEvents is the relay's pass over events: it claims up to limit undispatched events older than
// the grace, starts them and marks them.
func (s *Starter) claimEvents(ctx context.Context, limit int) (int, error) {
	var rows []eventRow
	claim, err := lease(ctx, s.DB, outbox.Events, &rows, func(tx *gorm.DB) *gorm.DB { return s.eventClaim(tx, limit) })
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	// Starts stop at the first failure; the rest go back to the next pass, of any relay, as the mark
	// ends the claim.
	started, startErr := s.startRows(ctx, rows)
	if err := markClaimed(s.DB.WithContext(ctx), outbox.Events, claim, started); err != nil {
		return 0, err
	}
	return len(started), startErr
}

// eventClaim selects and locks up to limit undispatched events past the grace that no relay holds,
// oldest first. It locks the event's row, as a previous release's relay does, so that two relays of
// different releases never hold the same event, and its state row: a row marked dispatched since
// the statement's snapshot is then read again once locked, and left, where an unlocked state row
// would still be read as the snapshot saw it and the event started twice.
func (s *Starter) eventClaim(tx *gorm.DB, limit int) *gorm.DB {
	return s.pastGrace(undispatchedEvents(tx), "s.created_at").Where(unleased("events", "events")).Limit(limit).
		Clauses(clause.Locking{Strength: "NO KEY UPDATE", Table: clause.Table{Name: "events, s", Raw: true}, Options: "SKIP LOCKED"})
}

// relayLease is how long a relay's claim keeps other relays off its rows: far longer than a batch of
// starts takes, and the time a relay that died mid-batch delays its rows.
const relayLease = time.Minute

// lease claims rows in one statement, which also writes the claim (relay_claims) naming them and
// deletes claims that ran out: SKIP LOCKED keeps concurrent relays apart while it runs, and the claim
// keeps them apart afterwards, so no lock or transaction is held while Temporal answers the starts.
// A row is taken only if, once locked, no claim committed meanwhile names it (wds_relay_claimed,
// which reads after the lock what the statement's own snapshot, older, may not show).
func lease[R row](ctx context.Context, db *gorm.DB, q outbox.Queue, rows *[]R, claim func(*gorm.DB) *gorm.DB) (uuid.UUID, error) {
	id := uuid.New()
	err := db.WithContext(ctx).Raw(`WITH expired AS (DELETE FROM relay_claims WHERE until < clock_timestamp()),
		locked AS MATERIALIZED (?),
		claimed AS (SELECT * FROM locked WHERE NOT wds_relay_claimed(?, locked.id)),
		claim AS (INSERT INTO relay_claims (id, source, row_ids, until)
			SELECT ?, ?, array_agg(id), clock_timestamp() + ? * interval '1 second' FROM claimed HAVING count(*) > 0)
		SELECT * FROM claimed`, claim(db.WithContext(ctx)), q.Table, id, q.Table, relayLease.Seconds()).Find(rows).Error
	if err != nil {
		return id, fmt.Errorf("claim %s: %w", q.Table, err)
	}
	return id, nil
}

// row is a relay's claimed row: an event or a queued start.
type row interface{ rowID() uuid.UUID }

func (r eventRow) rowID() uuid.UUID    { return r.ID }
func (r dispatchRow) rowID() uuid.UUID { return r.ID }

func ids[R row](rows []R) []uuid.UUID {
	out := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		out[i] = r.rowID()
	}
	return out
}

// unleased is the condition on table (alias a) for rows no relay holds: none named in an unexpired
// claim, none under a lease a previous release's relay wrote on the row itself.
func unleased(table, a string) string {
	return "(" + a + ".relay_lease_until IS NULL OR " + a + ".relay_lease_until < clock_timestamp()) AND NOT EXISTS (" +
		"SELECT 1 FROM relay_claims c WHERE c.source = '" + table + "' AND c.until >= clock_timestamp() AND " + a + ".id = ANY (c.row_ids))"
}

// markClaimed marks the rows of a relay's claim that were dealt with, as markStarted does, and ends
// the claim in the same statement: the rows not dealt with are free for the next pass. Should it
// fail, the claim runs out by itself.
func markClaimed(db *gorm.DB, q outbox.Queue, claim uuid.UUID, ids []uuid.UUID) error {
	if len(ids) == 0 {
		ids = []uuid.UUID{uuid.Nil} // IN () is not SQL; no row has the nil id
	}
	err := db.Exec("WITH ended AS (DELETE FROM relay_claims WHERE id = ?) "+q.Mark, claim, ids).Error
	if err != nil {
		return fmt.Errorf("mark %s dispatched: %w", q.Table, err)
	}
	return nil
}

// startNow starts rows a request has just committed (events, or queued re-fires and tests). It holds
// no transaction, lock or transaction slot while Temporal answers, so a slow Temporal does not hold up
// the request's peers' database work: it reads the rows, starts them and marks those it dealt with in
// one statement. The relay leaves rows younger than its grace alone meanwhile, and a crash before the
// mark leaves them to it.
func startNow[R any](ctx context.Context, db *gorm.DB, q outbox.Queue, read func(*gorm.DB, *[]R) error,
	start func(context.Context, []R) ([]uuid.UUID, error)) error {
	var rows []R
	if err := read(db.WithContext(ctx), &rows); err != nil {
		return fmt.Errorf("read %s to start: %w", q.Table, err)
	}
	started, startErr := start(ctx, rows)
	// Marked even when ctx ended meanwhile: the relay would start them again, in one burst.
	if err := markStarted(db.WithContext(context.WithoutCancel(ctx)), q, started); err != nil {
		return err
	}
	return startErr
}

// startRows starts each targeted row's workflow, in order, until one fails, and returns the rows it
// dealt with: started, or marked without a workflow because no endpoint receives them.
func (s *Starter) startRows(ctx context.Context, rows []eventRow) ([]uuid.UUID, error) {
	var done []uuid.UUID
	for _, r := range rows {
		if r.Targeted {
			if err := s.startEvent(ctx, r); err != nil {
				return done, err
			}
		}
		done = append(done, r.ID)
	}
	return done, nil
}

// pastGrace narrows the relay's claim to rows whose column col (a creation time) is older than the
// grace: younger ones belong to the request that committed them (startNow).
func (s *Starter) pastGrace(q *gorm.DB, col string) *gorm.DB {
	if s.Grace <= 0 {
		return q
	}
	return q.Where(col+" < clock_timestamp() - make_interval(secs => ?)", s.Grace.Seconds())
}

// markStarted records that rows of the queue were dealt with; a row already marked by someone else
// stays as it was.
func markStarted(db *gorm.DB, q outbox.Queue, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	if err := db.Exec(q.Mark, ids).Error; err != nil {
		return fmt.Errorf("mark %s dispatched: %w", q.Table, err)
	}
	return nil
}

// startEvent starts the workflow of one event with its chains planned: their targets, chain ids and
// first delivery ids are in the input and WdsEndpointIds is set at start, so the workflow's history
// holds no lookup, id marker or search-attribute update before its first attempts. An event whose
// subscribed endpoints are all disabled is started unplanned, as before: the workflow looks again.
func (s *Starter) startEvent(ctx context.Context, r eventRow) error {
	var targets []contract.Target
	if len(r.Targets) > 0 {
		// Unreadable targets must not hold up the relay's batch: the workflow can look them up itself.
		if err := json.Unmarshal(r.Targets, &targets); err != nil {
			s.Log.WithError(err).WithField("event_id", r.ID).Warn("targets unreadable; starting the event unplanned")
			targets = nil
		}
	}
	p := contract.EventParams{EventID: r.ID, OrgID: r.OrgID, EventType: r.Type, RetrySchedule: s.Schedule, Design: design}
	name := contract.EventWorkflowName
	var extra []temporal.SearchAttributeUpdate
	if len(targets) > 0 {
		name = contract.PlannedEventWorkflowName
		ids := make([]string, len(targets))
		for i, t := range targets {
			t.URL = egress.RedactURL(t.URL) // history shows it; the delivery reads the full URL itself
			p.Chains = append(p.Chains, contract.PlannedChain{Target: t, ChainID: uuid.New(), FirstDeliveryID: uuid.New()})
			ids[i] = t.EndpointID.String()
		}
		extra = append(extra, contract.AttrEndpointIDs.ValueSet(ids))
	}
	summary := r.Type + " event, endpoints resolved when it runs"
	if len(targets) > 0 {
		summary = r.Type + " → " + endpointCount(len(targets))
	}
	return s.start(ctx, workflowStart{id: contract.EventWorkflowID(r.ID), name: name, summary: summary, orgID: r.OrgID,
		eventID: r.ID, eventType: r.Type, order: r.Order, params: p, extra: extra})
}

type dispatchRow struct {
	models.Dispatch
	EventType string
	Order     orderRef `gorm:"embedded"`
}

// queuedStarts selects undispatched re-fires and tests, oldest first, with their event's type.
func queuedStarts(db *gorm.DB) *gorm.DB {
	return db.Table("webhook_dispatches d").Select("d.*, e.type AS event_type, " + orderColumns("e")).
		Joins("JOIN events e ON e.id = d.event_id").Where("d.dispatched_at IS NULL").Order("d.created_at, d.id")
}

// claimDispatches is the relay's pass over queued re-fires and tests, as claimEvents is over events.
func (s *Starter) claimDispatches(ctx context.Context, limit int) (int, error) {
	var rows []dispatchRow
	claim, err := lease(ctx, s.DB, queued, &rows, func(tx *gorm.DB) *gorm.DB {
		return s.pastGrace(queuedStarts(tx), "d.created_at").Where(unleased("webhook_dispatches", "d")).Limit(limit).
			Clauses(clause.Locking{Strength: "NO KEY UPDATE", Table: clause.Table{Name: "d"}, Options: "SKIP LOCKED"})
	})
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	started, startErr := s.startDispatchRows(ctx, rows)
	if err := markClaimed(s.DB.WithContext(ctx), queued, claim, started); err != nil {
		return 0, err
	}
	return len(started), startErr
}

// startDispatchRows starts each queued start's workflow (startEach).
func (s *Starter) startDispatchRows(ctx context.Context, rows []dispatchRow) ([]uuid.UUID, error) {
	return startEach(ctx, rows, s.startDispatch)
}

// startEach starts each row's workflow with start, in order, until one fails, and returns the ids of
// those started: the rest stay unstarted for the next pass.
func startEach[R row](ctx context.Context, rows []R, start func(context.Context, R) error) ([]uuid.UUID, error) {
	var started []uuid.UUID
	for _, r := range rows {
		if err := start(ctx, r); err != nil {
			return started, err
		}
		started = append(started, r.rowID())
	}
	return started, nil
}

// batchStarts is how many starts a recovery batch has in flight at once.
const batchStarts = 8

// startConcurrently starts every row, batchStarts at a time, and returns the rows started and the
// first failure.
func startConcurrently[R row](ctx context.Context, rows []R, start func(context.Context, R) error) ([]uuid.UUID, error) {
	var (
		mu      sync.Mutex
		started []uuid.UUID
		g       errgroup.Group
	)
	g.SetLimit(batchStarts)
	for _, r := range rows {
		g.Go(func() error {
			if err := start(ctx, r); err != nil {
				return err
			}
			mu.Lock()
			started = append(started, r.rowID())
			mu.Unlock()
			return nil
		})
	}
	err := g.Wait()
	return started, err
}

func (s *Starter) startDispatch(ctx context.Context, r dispatchRow) error {
	if r.Kind == models.DispatchTest {
		p := contract.TestParams{EventID: r.EventID, OrgID: r.OrgID, EndpointID: r.EndpointID, ChainID: r.ChainID, DeliveryID: *r.DeliveryID,
			Design: design}
		return s.start(ctx, workflowStart{id: r.WorkflowID, name: contract.TestWorkflowName, summary: r.EventType + " → 1 endpoint",
			orgID: r.OrgID, eventID: r.EventID, eventType: r.EventType, order: r.Order, params: p})
	}
	p := contract.RefireParams{EventID: r.EventID, OrgID: r.OrgID, EventType: r.EventType, EndpointID: r.EndpointID, ChainID: r.ChainID, RetrySchedule: s.Schedule,
		Design: design}
	// A re-fire, resend or recovery: a fresh chain to one endpoint, named in the UI by its kind, on
	// the manual queue so that it never takes a fresh delivery's slot.
	kind := map[string]string{models.DispatchRefire: "re-fire", models.DispatchResend: "resend", models.DispatchRecovery: "recovery"}[r.Kind]
	return s.start(ctx, workflowStart{id: r.WorkflowID, name: contract.RefireWorkflowName, summary: r.EventType + " " + kind + " → 1 endpoint", queue: contract.ManualTaskQueue,
		orgID: r.OrgID, eventID: r.EventID, eventType: r.EventType, order: r.Order, params: p})
}

// endpointCount is "1 endpoint" or "n endpointCount".
func endpointCount(n int) string {
	if n == 1 {
		return "1 endpoint"
	}
	return strconv.Itoa(n) + " endpoints"
}

// workflowStart is one workflow to start: its id, type and input, its one line in the Temporal UI's
// list (summary, "order.created → 2 endpoints") and what its search attributes say.
type workflowStart struct {
	id, name, summary string
	orgID, eventID    uuid.UUID
	eventType         string
	order             orderRef
	params            any
	extra             []temporal.SearchAttributeUpdate
	queue             string // the task queue; empty is contract.TaskQueue
}

// start starts one workflow; an id already used counts as started (a duplicate start is harmless).
// The order's attributes are left out while the namespace lacks them (temporalclient.OptionalAttrs).
func (s *Starter) start(ctx context.Context, w workflowStart) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	attrs := append([]temporal.SearchAttributeUpdate{
		contract.AttrOrgID.ValueSet(w.orgID.String()),
		contract.AttrEventID.ValueSet(w.eventID.String()),
		contract.AttrEventType.ValueSet(w.eventType),
		contract.AttrDeliveryStatus.ValueSet(string(contract.WorkflowDelivering)),
	}, w.extra...)
	optional := w.order.attrs()
	if len(optional) > 0 && s.optionalAttrs.Usable() {
		err := s.execute(ctx, w, append(attrs, optional...))
		if !temporalclient.MissingAttribute(err) {
			return err
		}
		s.optionalAttrs.Missing(s.Log, s.Namespace, err)
	}
	return s.execute(ctx, w, attrs)
}

// attrs are the order's search attributes, none for an event about no order.
func (o orderRef) attrs() []temporal.SearchAttributeUpdate {
	var out []temporal.SearchAttributeUpdate
	if o.OrderID != nil {
		out = append(out, contract.AttrOrderID.ValueSet(o.OrderID.String()))
	}
	if o.OrderNumber != nil {
		out = append(out, contract.AttrOrderNumber.ValueSet(*o.OrderNumber))
	}
	return out
}

func (s *Starter) execute(ctx context.Context, w workflowStart, attrs []temporal.SearchAttributeUpdate) error {
	_, err := s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       w.id,
		TaskQueue:                                cmp.Or(w.queue, contract.TaskQueue),
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            w.summary,
		TypedSearchAttributes:                    temporal.NewSearchAttributes(attrs...),
		WorkflowTaskTimeout:                      contract.TaskTimeout,
		// Where the starter is also a worker (the relay, a recovery batch), the start's answer carries
		// the first workflow task: no poll. Elsewhere (wds serve) the SDK asks for none.
		EnableEagerStart: true,
	}, w.name, w.params)
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &already) {
		return fmt.Errorf("start workflow %s: %w", w.id, err)
	}
	return nil
}

// NewStarter is the Starter of a wds process: cfg's retry ladder, the relay's grace. A process builds
// one and hands it to every writer (the after-commit starts) and to Run (the relay, the activities'
// own starts).
func NewStarter(cfg *config.Config, db *gorm.DB, c client.Client, log logrus.FieldLogger) *Starter {
	return &Starter{DB: db, Temporal: c, Schedule: cfg.WebhookRetrySchedule, Log: log, Grace: RelayGrace, Namespace: cfg.TemporalNamespace}
}
