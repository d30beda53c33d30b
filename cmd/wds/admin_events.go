package main

import (
	"context"
	"flag"

	"github.com/google/uuid"

	"wds/internal/eventsearch"
	"wds/internal/order"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/resend"
)

func init() {
	registerAdmin("event list", "search an org's events by order, type, outcome, resource or time", eventList)
	registerAdmin("event show", "one event with its chains and every attempt", eventShow)
	registerAdmin("event resend", "send an event again, to every endpoint or one; or an order's events, to one endpoint", eventResend)
}

// eventOps is the support desk's event search the event commands read (eventsearch.Service).
type eventOps interface {
	ListEvents(ctx context.Context, q eventsearch.EventsQuery) (*eventsearch.EventsPage, error)
	Event(ctx context.Context, id uuid.UUID, actorID *uuid.UUID) (*eventsearch.EventDetail, error)
}

// resendOps is the support desk's manual starts the resend and re-fire commands queue
// (resend.Service); the queued chains are announced to the workers, which start them at once.
type resendOps interface {
	Refire(ctx context.Context, deliveryID, actorID uuid.UUID) (*resend.Refired, error)
	Resend(ctx context.Context, eventID, actorID uuid.UUID, endpointID *uuid.UUID) (*resend.Resent, error)
	ResendOrder(ctx context.Context, ref order.Ref, endpointID, actorID uuid.UUID) (*resend.Resent, error)
	StartDispatches(ctx context.Context, ids ...uuid.UUID)
}

// eventList finds an org's events, newest first; --order takes the order's id or its number.
func eventList(fs *flag.FlagSet) runFunc {
	org := uuidFlag(fs, "org", "org id")
	order, typ := fs.String("order", "", "the order's id or number: every event about it"), fs.String("type", "", "event type")
	resource, outcome := fs.String("resource", "", "the event's resource id"), fs.String("outcome", "", "in_progress|dropped|succeeded|no_endpoints")
	endpoint := fs.String("endpoint", "", "endpoint id: the events with a chain to it, each with its outcome there")
	since, until := fs.String("since", "", "created at or after (RFC 3339)"), fs.String("until", "", "created before (RFC 3339)")
	limit := fs.Int("limit", paging.DefaultLimit, "1..100")
	cursorAt, cursorID := fs.String("cursor-at", "", "next_cursor.at"), fs.String("cursor-id", "", "next_cursor.id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		q := eventsearch.EventsQuery{OrgID: *org, Type: *typ, Outcome: eventsearch.Outcome(*outcome)}
		var err error
		if q.Limit, err = paging.ClampLimit(*limit, true); err != nil {
			return nil, err
		}
		if q.Cursor, err = paging.ParseCursor(*cursorAt, *cursorID); err != nil {
			return nil, err
		}
		if *order != "" {
			id, err := orderID(ctx, env, "order", *order, org)
			if err != nil {
				return nil, err
			}
			q.OrderID = &id
		}
		if *endpoint != "" {
			id, err := uuid.Parse(*endpoint)
			if err != nil {
				return nil, problem.Fail(paging.ErrInvalidParameter, "--endpoint must be a UUID")
			}
			q.EndpointID = &id
		}
		if *resource != "" {
			id, err := uuid.Parse(*resource)
			if err != nil {
				return nil, problem.Fail(paging.ErrInvalidParameter, "--resource must be a UUID")
			}
			q.ResourceID = &id
		}
		if q.Since, err = optionalTime("since", *since); err != nil {
			return nil, err
		}
		if q.Until, err = optionalTime("until", *until); err != nil {
			return nil, err
		}
		return env.events.ListEvents(ctx, q)
	}
}

// orderRef reads a flag naming an order by its id or its number (order.ParseRef).
func orderRef(flagName, v string) (order.Ref, error) {
	return order.ParseRef("--"+flagName, v, paging.ErrInvalidParameter)
}

// orderID reads a flag naming an order and finds it: by id as given, or by number within --org
// (numbers are per org); no such order in the org is not_found.
func orderID(ctx context.Context, env *adminEnv, flagName, v string, org *uuid.UUID) (uuid.UUID, error) {
	ref, err := orderRef(flagName, v)
	switch {
	case err != nil:
		return uuid.Nil, err
	case org != nil:
		return ref.Resolve(ctx, env.db, *org)
	case ref.ByNumber():
		return uuid.Nil, problem.Fail(paging.ErrInvalidParameter,
			"--%s %d is an order number: give --org too (numbers are per org), or the order's id", flagName, ref.Number)
	}
	return ref.ID, nil
}

func eventShow(fs *flag.FlagSet) runFunc {
	id := uuidFlag(fs, "id", "event id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		return env.events.Event(ctx, *id, nil)
	}
}

// eventResend queues a fresh chain of the event to one endpoint or to every subscribed one, or,
// with --order, of every event about the order to one endpoint; the workers start them within
// seconds.
func eventResend(fs *flag.FlagSet) runFunc {
	actor := uuidFlag(fs, "actor", "acting user id")
	id := fs.String("id", "", "event id (or --order)")
	order := fs.String("order", "", "the order's id or number: every event about it, to --endpoint")
	endpoint := fs.String("endpoint", "", "endpoint id (default: every enabled endpoint subscribed to the event's type; required with --order)")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		var ep *uuid.UUID
		if *endpoint != "" {
			parsed, err := uuid.Parse(*endpoint)
			if err != nil {
				return nil, problem.Fail(paging.ErrInvalidParameter, "--endpoint must be a UUID")
			}
			ep = &parsed
		}
		switch {
		case (*id == "") == (*order == ""):
			return nil, problem.Fail(paging.ErrInvalidParameter, "give --id EVENT, or --order N with --endpoint ID")
		case *order != "" && ep == nil:
			return nil, problem.Fail(paging.ErrInvalidParameter, "--order needs --endpoint: the endpoint to send the order's events to")
		case *order != "":
			ref, err := orderRef("order", *order)
			if err != nil {
				return nil, err
			}
			return env.resends.ResendOrder(ctx, ref, *ep, *actor)
		}
		event, err := uuid.Parse(*id)
		if err != nil {
			return nil, problem.Fail(paging.ErrInvalidParameter, "--id must be a UUID")
		}
		return env.resends.Resend(ctx, event, *actor, ep)
	}
}
