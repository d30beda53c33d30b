package api

import (
	"context"
	"time"

	"wds/internal/apikeys"
	"wds/models"
)

// CacheKeys puts c in front of the read and integration key lookups of st, so that authenticating
// costs no database round trip; the process runs c.Listen, without which c is bypassed.
func CacheKeys(st *Services, c *apikeys.Cache) {
	st.ReadKeys = c.Reads(st.ReadKeys)
	st.Gate = cachedGate{IntegrationGate: st.Gate, keys: c.Integrations(st.Gate)}
}

// cachedGate is the Integration API's gate with its key lookup served by the cache.
type cachedGate struct {
	IntegrationGate
	keys apikeys.IntegrationKeyLookup
}

func (g cachedGate) AuthenticateIntegration(ctx context.Context, token string, now time.Time) (*models.IntegrationKey, error) {
	return g.keys.AuthenticateIntegration(ctx, token, now)
}
