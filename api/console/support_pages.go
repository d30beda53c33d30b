// The support desk's pages: find an org's events by the order they concern, and one event with its
// payload and every chain (docs/support.md).

package console

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/events"
	"wds/internal/eventsearch"
	"wds/internal/order"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/resend"
	"wds/models"
)

func init() {
	notices["resent"] = "Resent: a fresh chain starts at attempt 1."
	pages["events"] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/events.html"))
	pages["event"] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files,
		"templates/layout.html", "templates/attempt.html", "templates/event.html"))
}

func (c *Console) registerSupportPages(p *gin.RouterGroup) {
	p.GET("/events", c.events)
	p.GET("/events/:id", c.event)
	p.POST("/events/:id/resend", c.resend)
	c.registerEndpointSupport(p)
}

// EventSearch is the org's events and one event with its chains (eventsearch.Service).
type EventSearch interface {
	ListEvents(ctx context.Context, q eventsearch.EventsQuery) (*eventsearch.EventsPage, error)
	Event(ctx context.Context, id uuid.UUID, actorID *uuid.UUID) (*eventsearch.EventDetail, error)
}

// Resends re-fire a dropped delivery, resend an event or an order's events and send a test event
// (resend.Service).
type Resends interface {
	SendTestAs(ctx context.Context, orgID, endpointID, actorID uuid.UUID, budget func() error) (*resend.TestQueued, error)
	Refire(ctx context.Context, deliveryID, actorID uuid.UUID) (*resend.Refired, error)
	Resend(ctx context.Context, eventID, actorID uuid.UUID, endpointID *uuid.UUID) (*resend.Resent, error)
	ResendOrder(ctx context.Context, ref order.Ref, endpointID, actorID uuid.UUID) (*resend.Resent, error)
}

// eventFilters are the search form's fields, as typed.
var eventFilters = []string{"order", "endpoint", "type", "outcome", "since", "until"}

// events is the org's events, newest first, searched by order (id or number), type, outcome and
// time, keyset-paged.
func (c *Console) events(g *gin.Context) {
	s := sessionOf(g)
	form := map[string]string{}
	for _, f := range eventFilters {
		form[f] = strings.TrimSpace(g.Query(f))
	}
	data := map[string]any{"Types": events.Types(), "Outcomes": eventsearch.Outcomes}
	urls, err := c.endpointURLs(g)
	data["URLs"] = urls
	var q eventsearch.EventsQuery
	if err == nil {
		q, err = eventsQuery(g, form)
	}
	if err == nil {
		q.OrgID, q.ActorID = s.OrgID, &s.User.ID
		var page *eventsearch.EventsPage
		if page, err = c.Events.ListEvents(g.Request.Context(), q); err == nil {
			data["Rows"], data["Next"], data["Newer"] = page.Rows, eventsURL(g, form, page.NextCursor, false), eventsURL(g, form, newerCursor(q, page), true)
			if q.Cursor != nil {
				data["First"] = g.Request.URL.Path + "?" + searchValues(form).Encode()
			}
			c.render(g, http.StatusOK, "events", s, view{Data: data, Form: form})
			return
		}
	}
	c.render(g, status(err), "events", s, view{Error: c.problem(err), Data: data, Form: form})
}

// eventsQuery reads the search form: the order as an id or a number, times as RFC 3339 or as a
// browser's datetime-local value (UTC).
func eventsQuery(g *gin.Context, form map[string]string) (eventsearch.EventsQuery, error) {
	q := eventsearch.EventsQuery{Type: form["type"], Outcome: eventsearch.Outcome(form["outcome"]), Limit: 50, Newer: g.Query("dir") == "newer"}
	var err error
	if q.Cursor, err = paging.ParseCursor(g.Query("cursor_at"), g.Query("cursor_id")); err != nil {
		return q, err
	}
	if o := form["order"]; o != "" {
		ref, err := order.ParseRef("order", o, paging.ErrInvalidParameter)
		if err != nil {
			return q, err
		}
		q.SetOrder(ref)
	}
	if e := form["endpoint"]; e != "" {
		id, perr := uuid.Parse(e)
		if perr != nil {
			return q, problem.Fail(paging.ErrInvalidParameter, "endpoint must be one of the org's endpoints")
		}
		q.EndpointID = &id
	}
	for name, dst := range map[string]**time.Time{"since": &q.Since, "until": &q.Until} {
		if form[name] == "" {
			continue
		}
		t, err := searchTime(form[name])
		if err != nil {
			return q, problem.Fail(paging.ErrInvalidParameter, "%s must be a date and time such as 2026-11-26T09:00 (UTC) or an RFC 3339 time", name)
		}
		*dst = &t
	}
	return q, nil
}

// searchTime reads a search field's time: RFC 3339, or a datetime-local input's value taken as UTC.
func searchTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, problem.Fail(paging.ErrInvalidParameter, "not a time")
}

// newerCursor starts the page above this one: a Newer page's own, or, for a page reached from a
// cursor, its first row; nil on the first page.
func newerCursor(q eventsearch.EventsQuery, page *eventsearch.EventsPage) *paging.Cursor {
	switch {
	case q.Newer:
		return page.NewerCursor
	case q.Cursor != nil && len(page.Rows) > 0:
		return &paging.Cursor{At: page.Rows[0].CreatedAt, ID: page.Rows[0].ID}
	}
	return nil
}

// eventsURL is the URL of the page from cur (newer: the one above it), keeping the search, or ""
// when there is none (cur nil).
func eventsURL(g *gin.Context, form map[string]string, cur *paging.Cursor, newer bool) string {
	if cur == nil {
		return ""
	}
	q := searchValues(form)
	q.Set("cursor_at", cur.At.Format(time.RFC3339Nano))
	q.Set("cursor_id", cur.ID.String())
	if newer {
		q.Set("dir", "newer")
	}
	return g.Request.URL.Path + "?" + q.Encode()
}

// searchValues are the search's fields that were given, as a query string's values.
func searchValues(form map[string]string) url.Values {
	q := url.Values{}
	for k, v := range form {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// chainView is a chain with the link to its workflow.
type chainView struct {
	eventsearch.Chain
	WorkflowURL string
}

// event is one event: its payload, every chain with its attempts, and Resend per endpoint.
func (c *Console) event(g *gin.Context) { c.eventPage(g, http.StatusOK, view{Notice: notice(g)}) }

// resend delivers the event again to the form's endpoint (the service starts the chain), or shows
// the event with the refusal.
func (c *Console) resend(g *gin.Context) {
	s := sessionOf(g)
	id, err := pathID(g)
	var endpoint uuid.UUID
	if err == nil {
		if endpoint, err = uuid.Parse(g.PostForm("endpoint")); err != nil {
			err = problem.Fail(problem.Invalid, "endpoint must be an endpoint id")
		}
	}
	if err == nil {
		_, err = c.Resends.Resend(g.Request.Context(), id, s.User.ID, &endpoint)
	}
	if err != nil {
		c.eventPage(g, status(err), view{Error: c.problem(err)})
		return
	}
	c.done(g, "/console/events/"+id.String(), "resent")
}

// eventPage renders the event of the path with v's notice or error.
func (c *Console) eventPage(g *gin.Context, code int, v view) {
	s := sessionOf(g)
	id, err := pathID(g)
	var ev *eventsearch.EventDetail
	if err == nil {
		ev, err = c.Events.Event(g.Request.Context(), id, &s.User.ID)
	}
	if err == nil && ev.OrgID != s.OrgID {
		err = problem.Fail(problem.NotFound, "event %s not found", id) // another org of the operator's: switch to it first
	}
	if err != nil {
		c.render(g, status(err), "event", s, view{Error: c.problem(err)})
		return
	}
	chains := make([]chainView, len(ev.Chains))
	for i, ch := range ev.Chains {
		chains[i] = chainView{Chain: ch, WorkflowURL: c.workflowURL(ch.WorkflowID)}
	}
	eps, err := c.Webhooks.List(g.Request.Context(), s.OrgID, &s.User.ID)
	if err != nil {
		c.render(g, status(err), "event", s, view{Error: c.problem(err)})
		return
	}
	// Chains come oldest first: the last one of an endpoint is its latest.
	inProgress := map[uuid.UUID]bool{}
	for _, ch := range ev.Chains {
		inProgress[ch.EndpointID] = ch.Outcome == eventsearch.OutcomeInProgress
	}
	var targets []resendTarget // where Resend can send it: enabled endpoints subscribed to its type
	for _, ep := range eps {
		if ep.Enabled && slices.Contains(ep.EventTypes, ev.Type) {
			targets = append(targets, resendTarget{Endpoint: ep, InProgress: inProgress[ep.ID]})
		}
	}
	v.Data = map[string]any{"Event": ev, "Chains": chains, "Targets": targets, "Payload": indent(ev.Payload)}
	c.render(g, code, "event", s, v)
}

// resendTarget is an endpoint the event page offers to resend to, unless its latest chain of the
// event is still in progress (the service would refuse it: delivery_in_progress).
type resendTarget struct {
	models.Endpoint
	InProgress bool
}

// indent lays out a JSON body for reading; a body that does not parse is shown as stored.
func indent(raw []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}
