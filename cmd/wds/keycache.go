package main

import (
	"context"
	"time"

	"wds/api"
	"wds/apikeys"
	"wds/models"
)

// cacheKeys puts one key cache in front of the read and integration key lookups of stores, so that
// authenticating costs no database round trip; the caller runs its Listen, without which the cache
// is bypassed.
func cacheKeys(stores *api.Stores) *apikeys.Cache {
	c := apikeys.NewCache()
	stores.ReadKeys = c.Reads(stores.ReadKeys)
	stores.Gate = cachedGate{IntegrationGate: stores.Gate, keys: c.Integrations(stores.Gate)}
	return c
}

// cachedGate is the Integration API's gate with its key lookup served by the cache.
type cachedGate struct {
	api.IntegrationGate
	keys apikeys.IntegrationKeyLookup
}

func (g cachedGate) AuthenticateIntegration(ctx context.Context, token string, now time.Time) (*models.IntegrationKey, error) {
	return g.keys.AuthenticateIntegration(ctx, token, now)
}
