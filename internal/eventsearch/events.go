// The support desk's view of events: find an org's events by the order or resource they concern,
// with each event's outcome across its endpoints, and one event with its payload and every chain.

package eventsearch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/deliverylog"
	"wds/internal/events"
	"wds/internal/order"
	"wds/internal/platform/database"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/platform/ratelimit"
	"wds/internal/workspace"
	"wds/models"
)

// Chain kinds: what started a chain.
const (
	ChainOriginal = "original"
	ChainRefire   = models.DispatchRefire
	ChainResend   = models.DispatchResend
	ChainRecovery = models.DispatchRecovery
)

// EventsQuery is one page of an org's events, newest first. Zero fields do not filter.
type EventsQuery struct {
	OrgID uuid.UUID
	// ActorID nil is the database's own operator (`wds admin`); otherwise a member of the org.
	ActorID *uuid.UUID
	// StoreID narrows to one store's events (the lists' optional store_id).
	StoreID *uuid.UUID
	Type    string
	OrderID *uuid.UUID
	// OrderNumber finds the order by its number in the org (what a customer quotes), instead of OrderID.
	OrderNumber *int64
	ResourceID  *uuid.UUID
	// EndpointID keeps the events with a chain to that endpoint, each row's Outcome being that
	// endpoint's (its latest chain's); Outcome then filters on it.
	EndpointID *uuid.UUID
	Outcome    Outcome
	// Since is inclusive and Until exclusive, on created_at.
	Since, Until *time.Time
	Limit        int
	Cursor       *paging.Cursor
	// Newer reads the page just above Cursor (the newer events) instead of the one below it, for
	// the console's Newer link; the rows still come newest first.
	Newer bool
}

// SetOrder narrows the search to the order the reference names: by id, or by number in the org.
func (q *EventsQuery) SetOrder(r order.Ref) {
	if r.ByNumber() {
		q.OrderNumber = &r.Number
		return
	}
	q.OrderID = &r.ID
}

// EventRow is an event as the support desk lists it.
type EventRow struct {
	ID        uuid.UUID  `json:"id"`
	Type      string     `json:"type"`
	CreatedAt time.Time  `json:"created_at"`
	OrderID   *uuid.UUID `json:"order_id"`
	// OrderNumber is the order's number, what a person quotes; nil without an order. It is answered
	// as a string, as Order.number is, so a client compares the two without converting.
	OrderNumber *int64     `json:"order_number,string"`
	ResourceID  *uuid.UUID `json:"resource_id"`
	Outcome     Outcome    `json:"outcome"`
	ChainsTotal int        `json:"chains_total"`
	// Endpoints is each endpoint's outcome for the event (its latest chain's), one per endpoint with
	// a chain, so a row whose Outcome is dropped says where.
	Endpoints []EndpointOutcome `json:"endpoints" gorm:"-"`
}

// EndpointOutcome is how an event stands at one endpoint: its latest chain's state there.
type EndpointOutcome struct {
	EndpointID uuid.UUID `json:"endpoint_id"`
	Outcome    Outcome   `json:"outcome"`
}

// EventsPage is the list envelope.
type EventsPage struct {
	Rows       []EventRow     `json:"rows"`
	NextCursor *paging.Cursor `json:"next_cursor"`
	// NewerCursor starts the page above a Newer page's first row, when there is one (the console's).
	NewerCursor *paging.Cursor `json:"-"`
}

// ChainsSQL lists the chains of the event e: one row per chain with its endpoint, kind, start, the
// workflow running it and its state (succeeded, dropped or in_progress). The rule is the database's
// (wds_event_chains, migrations/00026_event_outcome.sql), where the triggers that keep each event's
// outcome use it too.
const ChainsSQL = `SELECT chain_id, endpoint_id, kind, workflow_id, started_at, state FROM wds_event_chains(ARRAY[e.id])`

// eventRowSQL reads events as the support desk lists them. The outcome and the chain count are kept
// in the event's state row (event_states) by the writes that change them (the database's
// wds_event_outcomes, over each endpoint's latest chain), so a page reads no chains and a search by
// outcome walks an index.
const eventRowSQL = `SELECT e.id, e.type, e.created_at, e.order_id,
		(SELECT r.number FROM orders r WHERE r.id = e.order_id) AS order_number, e.resource_id, s.outcome, s.chains_total
	FROM events e JOIN event_states s ON s.event_id = e.id`

// ListEvents pages through an org's events by (created_at DESC, id DESC): the events_org index, or
// with an order, resource or type filter the index that leads with it, so an order's events are
// found at once among millions; with an outcome, event_states_org_outcome. Test events are left out
// unless the type asks for them. The page is read in a turn at the database, as the Read API's are.
func (s *Service) ListEvents(ctx context.Context, q EventsQuery) (*EventsPage, error) {
	if err := validEventsQuery(q); err != nil {
		return nil, err
	}
	if err := s.requireMember(ctx, q.OrgID, q.ActorID); err != nil {
		return nil, err
	}
	done, err := s.paceSearch(ctx, q.OrgID)
	if err != nil {
		return nil, err
	}
	defer done()
	release, err := database.Admit(ctx, s.db)
	if err != nil {
		return nil, err
	}
	defer release()
	if q.Limit == 0 {
		q.Limit = paging.DefaultLimit
	}
	if q.OrderNumber != nil { // an unknown number finds nothing, as an unknown order id does
		id, err := order.Ref{Number: *q.OrderNumber}.Resolve(ctx, s.db, q.OrgID)
		if errors.Is(err, problem.NotFound) {
			return &EventsPage{Rows: []EventRow{}}, nil
		}
		if err != nil {
			return nil, err
		}
		q.OrderID = &id
	}
	sql, args := eventsPageSQL(q)
	rows := []EventRow{}
	if err := s.db.WithContext(ctx).Raw(sql, args...).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	if err := s.withEndpointOutcomes(ctx, rows); err != nil {
		return nil, err
	}
	return eventsPage(q, rows), nil
}

// eventsPage trims rows, read from the cursor outwards, to the page, newest first, with the cursors
// of the pages either side.
func eventsPage(q EventsQuery, rows []EventRow) *EventsPage {
	more := len(rows) > q.Limit
	if more {
		rows = rows[:q.Limit]
	}
	if q.Newer {
		slices.Reverse(rows)
	}
	p := &EventsPage{Rows: rows}
	if len(rows) == 0 {
		return p
	}
	first, last := rows[0], rows[len(rows)-1]
	if more || q.Newer { // a Newer page's cursor row, at least, is older
		p.NextCursor = &paging.Cursor{At: last.CreatedAt, ID: last.ID}
	}
	if more && q.Newer {
		p.NewerCursor = &paging.Cursor{At: first.CreatedAt, ID: first.ID}
	}
	return p
}

// eventsPageSQL is the page query of q and its arguments: the events it filters on, newest first,
// walked in an index's order so that a page costs the same at any depth.
func eventsPageSQL(q EventsQuery) (string, []any) {
	walk := walksOutcome(q)
	// The walk's own columns: an outcome's walk is of the state rows' index, the others of an index
	// of events.
	atCol, idCol := "e.created_at", "e.id"
	if walk {
		atCol, idCol = "s.created_at", "s.event_id"
	}
	where, args := "e.org_id = ?", []any{q.OrgID}
	add := func(cond string, v ...any) { where += " AND " + cond; args = append(args, v...) }
	switch {
	case q.Type != "":
		add("e.type = ?", q.Type)
	case walk:
		add("s.org_id = ? AND s.listed", q.OrgID) // event_states_org_outcome holds listed events alone
	default:
		add("e.type <> " + sqlWebhookTest)
	}
	if q.StoreID != nil {
		add("e.store_id = ?", *q.StoreID)
	}
	if q.OrderID != nil {
		add("e.order_id = ?", *q.OrderID)
	}
	if q.ResourceID != nil {
		add("e.resource_id = ?", *q.ResourceID)
	}
	if q.EndpointID != nil {
		// The endpoint's own outcome, its latest chain's: the rule of wds_event_outcomes, at one
		// endpoint. Read for each event the walk meets (see walksOutcome: never with this filter).
		add("e.id IN (SELECT d.event_id FROM webhook_deliveries d WHERE d.endpoint_id = ? AND d.event_id = e.id "+
			"UNION ALL SELECT p.event_id FROM webhook_dispatches p WHERE p.endpoint_id = ? AND p.event_id = e.id AND p.kind <> 'test')",
			*q.EndpointID, *q.EndpointID)
	}
	if q.Since != nil {
		// With an outcome walked as a range, this does not end the walk (PostgreSQL 15 ends one only
		// on a bound of the outcome's column): a page left unfilled reads the outcome's older index
		// entries, but no table rows for them. The planner's other choices read rows.
		add(atCol+" >= ?", *q.Since)
	}
	// The keyset: a row's place in the walk, which the cursor and until bound.
	keyset, order, lead := "("+atCol+", "+idCol+")", atCol+" DESC, "+idCol+" DESC", []any{}
	switch {
	case walk:
		add("s.outcome >= ? AND s.outcome <= ?", q.Outcome, q.Outcome)
		keyset, order, lead = "(s.outcome, "+atCol+", "+idCol+")", "s.outcome DESC, "+order, []any{q.Outcome}
	case q.Outcome != "" && q.EndpointID != nil:
		add("("+endpointOutcomeSQL+") = ?", *q.EndpointID, q.Outcome)
	case q.Outcome != "":
		add("s.outcome = ?", q.Outcome)
	}
	bound := func(cmp string, at time.Time, id uuid.UUID) {
		add(keyset+" "+cmp+" (?"+strings.Repeat(", ?", len(lead)+1)+")", slices.Concat(lead, []any{at, id})...)
	}
	below := func(at time.Time, id uuid.UUID) { bound("<", at, id) }
	// One bound, the tighter, starts the walk: given two on the same columns, PostgreSQL starts at
	// one and only filters by the other. Newer walks up from the cursor, in the index's other
	// direction, until bounding it from above.
	switch {
	case q.Newer && q.Cursor != nil:
		bound(">", q.Cursor.At, q.Cursor.ID)
		order = strings.ReplaceAll(order, " DESC", " ASC")
		if q.Until != nil {
			below(*q.Until, uuid.Nil)
		}
	case q.Cursor != nil && (q.Until == nil || q.Cursor.At.Before(*q.Until)):
		below(q.Cursor.At, q.Cursor.ID)
	case q.Until != nil:
		below(*q.Until, uuid.Nil) // no id is below the nil UUID: every event before until
	}
	rowSQL := eventRowSQL
	if q.EndpointID != nil {
		rowSQL = strings.Replace(rowSQL, "s.outcome,", "("+endpointOutcomeSQL+") AS outcome,", 1)
		args = append([]any{*q.EndpointID}, args...)
	}
	return rowSQL + " WHERE " + where + " ORDER BY " + order + " LIMIT ?", append(args, q.Limit+1)
}

// endpointOutcomeSQL is the event e's outcome at one endpoint (its parameter): its latest chain's
// state there, as wds_event_outcomes reads each endpoint's.
const endpointOutcomeSQL = `SELECT ch.state FROM wds_event_chains(ARRAY[e.id]) ch WHERE ch.endpoint_id = ?
	ORDER BY ch.started_at DESC, ch.chain_id DESC LIMIT 1`

// endpointOutcomesSQL is each endpoint's outcome for each of the events @ids: its latest chain's.
const endpointOutcomesSQL = `SELECT x.event_id, x.endpoint_id, x.state AS outcome FROM (SELECT ch.event_id, ch.endpoint_id, ch.state,
		row_number() OVER (PARTITION BY ch.event_id, ch.endpoint_id ORDER BY ch.started_at DESC, ch.chain_id DESC) AS n
	FROM wds_event_chains(CAST(@ids AS uuid[])) ch) x WHERE x.n = 1 ORDER BY x.endpoint_id`

// withEndpointOutcomes fills each row's Endpoints, reading the chains of the page's events alone.
func (s *Service) withEndpointOutcomes(ctx context.Context, rows []EventRow) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID.String()
		rows[i].Endpoints = []EndpointOutcome{}
	}
	var found []struct {
		EventID uuid.UUID
		EndpointOutcome
	}
	err := s.db.WithContext(ctx).Raw(endpointOutcomesSQL, map[string]any{"ids": "{" + strings.Join(ids, ",") + "}"}).Scan(&found).Error
	if err != nil {
		return fmt.Errorf("read the events' outcomes by endpoint: %w", err)
	}
	for i := range rows {
		for _, f := range found {
			if f.EventID == rows[i].ID {
				rows[i].Endpoints = append(rows[i].Endpoints, f.EndpointOutcome)
			}
		}
	}
	return nil
}

// walksOutcome reports whether q's page is read from event_states_org_outcome, in the order of that
// index alone: an outcome searched for with no order, resource or type, whose own indexes narrow
// further. Asked for s.outcome = X, newest first, the planner may instead walk the org's newest
// events (events_org, or every org's by time, events_created) and filter them, supposing an outcome is
// spread evenly over time; a search for an org's succeeded events under 200,000 newer drops read all
// of them, 1.3 s for 51 rows. Stated as a range, the outcome is not a constant the planner drops from
// the ORDER BY, and only event_states_org_outcome gives that order without sorting the org's events.
func walksOutcome(q EventsQuery) bool {
	return q.Outcome != "" && q.OrderID == nil && q.ResourceID == nil && q.Type == "" && q.EndpointID == nil
}

// sqlWebhookTest is the test event's type as an SQL literal.
const sqlWebhookTest = "'" + events.WebhookTest + "'"

// searchQueue is the longest an org's event search waits for its turn before it is refused.
const searchQueue = 5 * time.Second

// DefaultSearchRate is WDS_SUPPORT_SEARCH_RATE's default: an org's event searches a second, per
// instance, a burst of as many at once. A person searching never comes near it.
const DefaultSearchRate = 20

// NewSearchPacer paces each org's event searches to perSecond (0: DefaultSearchRate), for
// NewService.
func NewSearchPacer(perSecond int) *ratelimit.Pacer {
	if perSecond <= 0 {
		perSecond = DefaultSearchRate
	}
	return ratelimit.NewPacer(perSecond, searchQueue, nil)
}

// paceSearch waits for the org's next turn at the event search and for its search running, and
// returns the function that ends this one's: one org's members or scripts searching in a loop take
// their own turns, one search at a time, never the database turns and CPU another org's requests
// need (docs/support.md).
func (s *Service) paceSearch(ctx context.Context, orgID uuid.UUID) (done func(), err error) {
	return s.searches.Take(ctx, orgID.String(), "this org's event searches")
}

func validEventsQuery(q EventsQuery) error {
	if q.Type != "" && !events.Known(q.Type) {
		return problem.Fail(paging.ErrInvalidParameter, "type: unknown event type %q; known: %s", q.Type, events.Names())
	}
	if q.Outcome != "" && !slices.Contains(Outcomes, q.Outcome) {
		return problem.Fail(paging.ErrInvalidParameter, "outcome must be one of in_progress, dropped, succeeded, no_endpoints")
	}
	if q.OrderID != nil && q.OrderNumber != nil {
		return problem.Fail(paging.ErrInvalidParameter, "give the order's id or its number, not both")
	}
	if q.Since != nil && q.Until != nil && !q.Since.Before(*q.Until) {
		return problem.Fail(paging.ErrInvalidParameter, "since must be before until")
	}
	return nil
}

// requireMember checks that a non-nil actor is a member of the org (any role); to anyone else the
// org does not exist.
func (s *Service) requireMember(ctx context.Context, orgID uuid.UUID, actorID *uuid.UUID) error {
	if actorID == nil {
		return nil
	}
	return workspace.RequireRole(ctx, s.db, orgID, *actorID, workspace.Anyone...)
}

// Chain is one retry ladder of an event to one endpoint, with its attempts oldest first.
type Chain struct {
	ChainID     uuid.UUID         `json:"chain_id"`
	EndpointID  uuid.UUID         `json:"endpoint_id"`
	EndpointURL string            `json:"endpoint_url"`
	Kind        string            `json:"kind"`
	Outcome     Outcome           `json:"outcome"`
	WorkflowID  string            `json:"workflow_id"`
	StartedAt   time.Time         `json:"started_at"`
	Attempts    []models.Delivery `json:"attempts" gorm:"-"`
}

// EventDetail is one event with the exact body delivered and every chain.
type EventDetail struct {
	EventRow
	OrgID   uuid.UUID       `json:"-"`
	Payload json.RawMessage `json:"payload"`
	Chains  []Chain         `json:"chains"`
}

// Event is one event's detail. An event of an org the actor is not in, or a test event, is not found.
// It is read in one read-only transaction at repeatable read, which is a turn at the database as the
// Read API's pages are: its row, chains and attempts are one snapshot, so a chain's outcome always
// agrees with the attempts listed under it, even while an attempt lands between two of the reads.
func (s *Service) Event(ctx context.Context, id uuid.UUID, actorID *uuid.UUID) (*EventDetail, error) {
	var d *EventDetail
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		snap := *s
		snap.db = tx
		var err error
		d, err = snap.event(ctx, id, actorID)
		return err
	}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	return d, err
}

// event reads Event's detail on s.db.
func (s *Service) event(ctx context.Context, id uuid.UUID, actorID *uuid.UUID) (*EventDetail, error) {
	var rows []struct {
		EventRow
		OrgID uuid.UUID
		Body  string
	}
	err := s.db.WithContext(ctx).Raw(`SELECT x.*, e.org_id, e.body::text AS body FROM (`+eventRowSQL+` WHERE e.id = ? AND e.type <> ?) x
		JOIN events e ON e.id = x.id`, id, events.WebhookTest).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("load event: %w", err)
	}
	if len(rows) == 0 {
		return nil, problem.Fail(problem.NotFound, "event %s not found", id)
	}
	manager, err := deliverylog.ReadsHeaders(ctx, s.db, rows[0].OrgID, actorID, "event", id)
	if err != nil {
		return nil, err
	}
	d := &EventDetail{EventRow: rows[0].EventRow, OrgID: rows[0].OrgID, Payload: json.RawMessage(rows[0].Body)}
	if d.Chains, err = s.chains(ctx, id); err != nil {
		return nil, err
	}
	for i := range d.Chains {
		for j := range d.Chains[i].Attempts {
			deliverylog.ShowSent(s.box, manager, &d.Chains[i].Attempts[j])
		}
	}
	page := []EventRow{d.EventRow}
	if err := s.withEndpointOutcomes(ctx, page); err != nil {
		return nil, err
	}
	d.EventRow = page[0]
	return d, nil
}

// chains reads an event's chains, oldest first, each with its attempts.
func (s *Service) chains(ctx context.Context, eventID uuid.UUID) ([]Chain, error) {
	chains := []Chain{}
	err := s.db.WithContext(ctx).Raw(`SELECT ch.chain_id, ch.endpoint_id, w.url AS endpoint_url, ch.kind, ch.state AS outcome,
			ch.workflow_id, ch.started_at
		FROM events e CROSS JOIN LATERAL (`+ChainsSQL+`) ch JOIN webhook_endpoints w ON w.id = ch.endpoint_id
		WHERE e.id = ? ORDER BY ch.started_at, ch.chain_id`, eventID).Scan(&chains).Error
	if err != nil {
		return nil, fmt.Errorf("load chains: %w", err)
	}
	var attempts []models.Delivery
	if err := s.db.WithContext(ctx).Where("event_id = ?", eventID).Order("attempted_at, attempt, id").Find(&attempts).Error; err != nil {
		return nil, fmt.Errorf("load attempts: %w", err)
	}
	for i := range chains {
		chains[i].Attempts = []models.Delivery{}
		for _, a := range attempts {
			if a.ChainID == chains[i].ChainID {
				chains[i].Attempts = append(chains[i].Attempts, a)
			}
		}
	}
	return chains, nil
}
