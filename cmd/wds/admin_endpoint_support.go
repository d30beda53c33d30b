package main

import (
	"context"
	"flag"
	"os"
	"strconv"
	"strings"

	"wds/internal/endpoints"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/models"
)

func init() {
	registerAdmin("endpoint update", "change an endpoint's URL, description, events, attempts, rate limit or headers", endpointUpdate)
}

// headerFlags collects repeated --header 'Name: value' flags.
type headerFlags map[string]string

func (h headerFlags) String() string { return "" }

func (h headerFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return problem.Fail(paging.ErrInvalidParameter, "--header must be 'Name: value'")
	}
	h[strings.TrimSpace(name)] = strings.TrimSpace(value)
	return nil
}

// rateLimitFlag reads --rate-limit N, or none for no limit.
func rateLimitFlag(v string) (models.Optional[int], error) {
	if v == "none" {
		return models.Optional[int]{Set: true, Null: true}, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return models.Optional[int]{}, problem.Fail(paging.ErrInvalidParameter, "--rate-limit must be a number of deliveries a second or none")
	}
	return models.Optional[int]{Set: true, Value: n}, nil
}

// endpointUpdate edits what its flags name; --header replaces the whole set, --clear-headers
// removes it, --rate-limit none removes the limit.
func endpointUpdate(fs *flag.FlagSet) runFunc {
	id, actor := uuidFlag(fs, "id", "endpoint id"), uuidFlag(fs, "actor", "acting user id")
	url, events := fs.String("url", "", "new https:// URL"), fs.String("events", "", "event types, comma separated")
	description := fs.String("description", "", "what the endpoint is for (at most 200 characters); '' removes it")
	maxAttempts, rateLimit := fs.Int("max-attempts", 0, "1..10"), fs.String("rate-limit", "", "deliveries a second (1..1000), or none")
	headers := headerFlags{}
	fs.Var(headers, "header", "'Name: value' sent on every attempt; repeat for several; replaces the whole set")
	clearHeaders := fs.Bool("clear-headers", false, "remove every custom header")
	return func(ctx context.Context, env *adminEnv) (any, error) {
		in := endpoints.UpdateInput{ID: *id, ActorID: *actor}
		var err error
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "url":
				in.URL = models.Optional[string]{Set: true, Value: *url}
			case "description":
				in.Description = models.Optional[string]{Set: true, Value: *description}
			case "events":
				in.EventTypes = models.Optional[[]string]{Set: true, Value: strings.Split(*events, ",")}
			case "max-attempts":
				in.MaxAttempts = models.Optional[int]{Set: true, Value: *maxAttempts}
			case "rate-limit":
				in.RateLimit, err = rateLimitFlag(*rateLimit)
			case "header":
				in.Headers = models.Optional[map[string]string]{Set: true, Value: headers}
			case "clear-headers":
				if *clearHeaders {
					in.Headers = models.Optional[map[string]string]{Set: true, Null: true}
				}
			}
		})
		if err != nil {
			return nil, err
		}
		if in.URL.Set {
			allowLocalReceiversOnDevDB(env, os.Stderr)
		}
		// Headers are sealed: setting them needs the encryption key, other edits do not.
		svc, err := webhookService(env, in.Headers.Set)
		if err != nil {
			return nil, err
		}
		return svc.Update(ctx, in)
	}
}
