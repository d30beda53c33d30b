package main

import (
	"context"
	"flag"
	"os"
	"strings"

	"github.com/google/uuid"

	"wds/internal/deliverylog"
	"wds/internal/endpoints"
	"wds/internal/platform/paging"
	"wds/models"
)

func init() {
	registerAdmin("endpoint create", "add a webhook endpoint; prints its signing secret, shown only here", endpointCreate)
	registerAdmin("endpoint list", "list an org's webhook endpoints with their health", endpointList)
	registerAdmin("endpoint disable", "stop deliveries to an endpoint; its waiting retries are dropped", endpointMutation((*endpoints.Service).Disable))
	registerAdmin("endpoint enable", "resume deliveries to a disabled endpoint", endpointMutation((*endpoints.Service).Enable))
	registerAdmin("endpoint delete", "remove an endpoint for good", endpointMutation((*endpoints.Service).Delete))
	registerAdmin("endpoint rotate-secret", "mint a new signing secret, the old one signing too for the grace", endpointRotate)
	registerAdmin("endpoint deliveries", "page through an endpoint's delivery log, newest first", endpointDeliveries)
	registerAdmin("delivery refire", "send a dropped delivery's event again to its endpoint", deliveryRefire)
}

// webhookService is the endpoint operations; sealing needs the encryption key, reading does not.
// They are built when the command runs, after allowLocalReceiversOnDevDB may have allowed local URLs.
func webhookService(env *adminEnv, seals bool) (*endpoints.Service, error) {
	svc, err := env.services(seals)
	if err != nil {
		return nil, err
	}
	return svc.webhooks, nil
}

func endpointCreate(fs *flag.FlagSet) runFunc {
	org, actor, url := uuidFlag(fs, "org", "org id"), uuidFlag(fs, "actor", "acting user id"), stringFlag(fs, "url", "https:// URL")
	events, maxAttempts := stringFlag(fs, "events", "event types, comma separated"), fs.Int("max-attempts", endpoints.DefaultMaxAttempts, "1..10")
	rateLimit := fs.String("rate-limit", "none", "deliveries a second (1..1000), or none")
	description := fs.String("description", "", "what the endpoint is for, shown beside its URL (at most 200 characters)")
	headers := headerFlags{}
	fs.Var(headers, "header", "'Name: value' sent on every attempt; repeat for several")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		limit, err := rateLimitFlag(*rateLimit)
		if err != nil {
			return nil, err
		}
		allowLocalReceiversOnDevDB(env, os.Stderr)
		svc, err := webhookService(env, true)
		if err != nil {
			return nil, err
		}
		in := endpoints.CreateInput{OrgID: *org, ActorID: *actor, URL: *url,
			EventTypes: strings.Split(*events, ","), MaxAttempts: *maxAttempts, Headers: headers, Description: *description}
		if !limit.Null {
			in.RateLimit = &limit.Value
		}
		ep, err := svc.Create(ctx, in)
		if err != nil {
			return nil, err
		}
		return map[string]string{"id": ep.ID.String(), "secret": ep.Secret}, nil
	}
}

func endpointList(fs *flag.FlagSet) runFunc {
	org := uuidFlag(fs, "org", "org id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		svc, _ := webhookService(env, false)
		rows, err := svc.List(ctx, *org, nil)
		if err != nil {
			return nil, err
		}
		return map[string]any{"rows": rows}, nil
	}
}

// endpointMutation is disable, enable or delete: --id and --actor, answered with the endpoint.
func endpointMutation(op func(*endpoints.Service, context.Context, uuid.UUID, uuid.UUID) (*models.Endpoint, error)) func(fs *flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		id, actor := uuidFlag(fs, "id", "endpoint id"), uuidFlag(fs, "actor", "acting user id")
		return func(ctx context.Context, env *adminEnv) (any, error) {
			svc, _ := webhookService(env, false)
			return op(svc, ctx, *id, *actor)
		}
	}
}

func endpointRotate(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "endpoint id"), uuidFlag(fs, "actor", "acting user id")
	grace := fs.Duration("grace", 0, "how long the old secret also signs, written as 24h (at most 7 days, 168h; default none)")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		svc, err := webhookService(env, true)
		if err != nil {
			return nil, err
		}
		return svc.RotateSecret(ctx, *id, *actor, *grace)
	}
}

// deliveryLogOps is the delivery log the endpoint deliveries command reads (deliverylog.Service).
type deliveryLogOps interface {
	ListDeliveries(ctx context.Context, q deliverylog.DeliveriesQuery) (*deliverylog.DeliveriesPage, error)
}

func endpointDeliveries(fs *flag.FlagSet) runFunc {
	id, limit := uuidFlag(fs, "id", "endpoint id"), fs.Int("limit", paging.DefaultLimit, "1..100")
	cursorAt, cursorID := fs.String("cursor-at", "", "next_cursor.at"), fs.String("cursor-id", "", "next_cursor.id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		n, err := paging.ClampLimit(*limit, true)
		if err != nil {
			return nil, err
		}
		cur, err := paging.ParseCursor(*cursorAt, *cursorID)
		if err != nil {
			return nil, err
		}
		return env.deliveries.ListDeliveries(ctx, deliverylog.DeliveriesQuery{EndpointID: *id, Limit: n, Cursor: cur})
	}
}

// deliveryRefire queues the re-fire; the worker's relay starts its workflow within a second.
func deliveryRefire(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "delivery id"), uuidFlag(fs, "actor", "acting user id")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		out, err := env.resends.Refire(ctx, *id, *actor)
		if err == nil {
			env.resends.StartDispatches(ctx, out.DispatchID)
		}
		return out, err
	}
}
