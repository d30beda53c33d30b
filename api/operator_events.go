package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/eventsearch"
	"wds/internal/order"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/resend"
)

// EventSearch is the support desk's events (eventsearch.Service): find an org's events, show one
// with its chains (docs/support.md).
type EventSearch interface {
	ListEvents(ctx context.Context, q eventsearch.EventsQuery) (*eventsearch.EventsPage, error)
	Event(ctx context.Context, id uuid.UUID, actorID *uuid.UUID) (*eventsearch.EventDetail, error)
}

// Resends are the support desk's manual starts (resend.Service): a dropped delivery's re-fire, an
// event's resend, an order's, and a test event.
type Resends interface {
	TestSender
	Refire(ctx context.Context, deliveryID, actorID uuid.UUID) (*resend.Refired, error)
	Resend(ctx context.Context, eventID, actorID uuid.UUID, endpointID *uuid.UUID) (*resend.Resent, error)
	ResendOrder(ctx context.Context, ref order.Ref, endpointID, actorID uuid.UUID) (*resend.Resent, error)
}

// registerSupport mounts the support desk's routes on the Operator API.
func (s *server) registerSupport(r *gin.Engine) {
	g := s.operatorGroup(r)
	g.GET("/orgs/:org_id/events", pathOrg, s.listEvents)
	g.GET("/events/:id", s.showEvent)
	g.GET("/deliveries/:id", s.showDelivery)
	g.POST("/events/:id/resend", s.resendEvent)
	g.POST("/orders/:id/resend", s.resendOrder)
	if s.Recoveries != nil {
		s.registerRecovery(g)
	}
}

// listEvents is GET /admin/v1/orgs/{org_id}/events, newest first, with its filters.
func (s *server) listEvents(c *gin.Context) {
	lq, err := listQuery(c)
	if err != nil {
		fail(c, err)
		return
	}
	actor := actorOf(c)
	q := eventsearch.EventsQuery{OrgID: lq.OrgID, ActorID: &actor, StoreID: lq.StoreID, Limit: lq.Limit, Cursor: lq.Cursor,
		Type: c.Query("type"), Outcome: eventsearch.Outcome(c.Query("outcome"))}
	for name, dst := range map[string]**uuid.UUID{"order_id": &q.OrderID, "resource_id": &q.ResourceID, "endpoint_id": &q.EndpointID} {
		if raw, ok := c.GetQuery(name); ok {
			id, err := uuid.Parse(raw)
			if err != nil {
				fail(c, problem.Fail(paging.ErrInvalidParameter, "%s must be a UUID", name))
				return
			}
			*dst = &id
		}
	}
	if raw, ok := c.GetQuery("order_number"); ok {
		ref, err := order.ParseRef("order_number", raw, paging.ErrInvalidParameter)
		if err != nil {
			fail(c, err)
			return
		}
		q.SetOrder(ref)
	}
	for name, dst := range map[string]**time.Time{"since": &q.Since, "until": &q.Until} {
		if raw, ok := c.GetQuery(name); ok {
			t, err := time.Parse(time.RFC3339Nano, raw)
			if err != nil {
				fail(c, problem.Fail(paging.ErrInvalidParameter, "%s must be an RFC 3339 date-time", name))
				return
			}
			*dst = &t
		}
	}
	p, err := s.Events.ListEvents(c.Request.Context(), q)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, p)
}

// showEvent is GET /admin/v1/events/{id}: the event, its payload and every chain with its attempts.
func (s *server) showEvent(c *gin.Context) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "event %q not found", c.Param("id")))
		return
	}
	actor := actorOf(c)
	d, err := s.Events.Event(c.Request.Context(), id, &actor)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, d)
}

// showDelivery is GET /admin/v1/deliveries/{id}: one attempt with the headers it sent (custom
// values to owners and admins only) and what came back.
func (s *server) showDelivery(c *gin.Context) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "delivery %q not found", c.Param("id")))
		return
	}
	actor := actorOf(c)
	d, err := s.Deliveries.Delivery(c.Request.Context(), id, &actor)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, d)
}

// resendEvent is POST /admin/v1/events/{id}/resend {endpoint_id?}: 202 with the fresh chains, which
// the service starts after its commit.
func (s *server) resendEvent(c *gin.Context) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "event %q not found", c.Param("id")))
		return
	}
	var b struct {
		EndpointID *string `json:"endpoint_id"`
	}
	if err := readObject(c, &b); err != nil {
		fail(c, err)
		return
	}
	var endpoint *uuid.UUID
	if b.EndpointID != nil {
		ep, err := uuid.Parse(*b.EndpointID)
		if err != nil {
			fail(c, problem.Fail(problem.Invalid, "endpoint_id must be a UUID"))
			return
		}
		endpoint = &ep
	}
	out, err := s.Resends.Resend(c.Request.Context(), id, actorOf(c), endpoint)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, out)
}

// resendOrder is POST /admin/v1/orders/{id}/resend {endpoint_id}: every event about the order (its
// id, or its number in the endpoint's org) resent once to the endpoint, oldest first; 202 with the
// fresh chains, which the service starts after its commit.
func (s *server) resendOrder(c *gin.Context) {
	var b struct {
		EndpointID *string `json:"endpoint_id"`
	}
	if err := readObject(c, &b); err != nil {
		fail(c, err)
		return
	}
	if b.EndpointID == nil {
		fail(c, problem.Fail(problem.Invalid, "endpoint_id is required: the endpoint to send the order's events to"))
		return
	}
	ep, err := uuid.Parse(*b.EndpointID)
	if err != nil {
		fail(c, problem.Fail(problem.Invalid, "endpoint_id must be a UUID"))
		return
	}
	ref, err := order.ParseRef("the order", c.Param("id"), endpoints.ErrInvalidParameter)
	if err != nil {
		fail(c, err)
		return
	}
	out, err := s.Resends.ResendOrder(c.Request.Context(), ref, ep, actorOf(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, out)
}
