package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"wds/api"
	"wds/internal/platform/database"
	"wds/internal/platform/problem"
	"wds/models"
)

// intFakes is the Integration API over fakes: one generic key that may write orders, by the token "int".
func intFakes(t *testing.T, gate *fakeGate, ing *fakeIngest) http.Handler {
	gate.key = &models.IntegrationKey{ID: uuid.New(), OrgID: uuid.New(), StoreID: uuid.New(),
		PayloadFormat: models.FormatGeneric, Scopes: models.TextArray{models.ScopeOrdersWrite}, RateLimit: 60}
	return fakeRouter(t, api.Deps{Services: api.Services{Gate: gate, Limits: gate, Ingest: ing}})
}

// The shared rate limit fails closed: when it cannot count a request the request is refused as
// unavailable, to retry, and nothing is written; a key over its limit is told when to come back.
func TestIntegrationRateLimitIsAskedBeforeTheWrite(t *testing.T) {
	ing := &fakeIngest{err: problem.Fail(problem.Invalid, "lines are wrong")}
	cannotCount := intFakes(t, &fakeGate{allowErr: fmt.Errorf("rate limit of key: %w", database.ErrBusy)}, ing)
	rec := serve(t, cannotCount, http.MethodPost, "/integrations/v1/orders", "int", "{}")
	wantUnavailable(t, rec.Code, rec.Body.Bytes(), rec.Header())

	over := intFakes(t, &fakeGate{allow: false}, ing)
	rec = serve(t, over, http.MethodPost, "/integrations/v1/orders", "int", "{}")
	wantError(t, rec.Code, rec.Body.Bytes(), http.StatusTooManyRequests, "rate_limited")
	if ra := rec.Header().Get("Retry-After"); ra != "60" {
		t.Errorf("Retry-After %q, want 60", ra)
	}
	if ing.orders != 0 {
		t.Fatalf("%d orders written past the rate limit", ing.orders)
	}

	within := intFakes(t, &fakeGate{allow: true}, ing)
	rec = serve(t, within, http.MethodPost, "/integrations/v1/orders", "int", "{}")
	wantError(t, rec.Code, rec.Body.Bytes(), http.StatusUnprocessableEntity, "validation_failed")
	if ing.orders != 1 {
		t.Fatalf("%d orders written within the limit, want 1", ing.orders)
	}
}
