package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wds/api"
	"wds/internal/platform/database"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/models"
)

// readFakes is the Read API over fakes: one org with a read_only key "ro" and a read_write key "rw".
type readFakes struct {
	org   uuid.UUID
	reads *fakeReads
	hooks *fakeWebhooks
	h     http.Handler
}

func newReadFakes(t *testing.T) *readFakes {
	f := &readFakes{org: uuid.New(), reads: &fakeReads{}, hooks: &fakeWebhooks{}}
	keys := fakeReadKeys{
		"ro": {ID: uuid.New(), OrgID: f.org, Scope: models.ScopeReadOnly},
		"rw": {ID: uuid.New(), OrgID: f.org, Scope: models.ScopeReadWrite},
	}
	f.h = fakeRouter(t, api.Deps{Services: api.Services{ReadKeys: keys, Reads: f.reads}, Webhooks: f.hooks, Resends: f.hooks})
	return f
}

// A store's failure reaches the caller in the error shape, with the status errors.go gives its
// kind: a database that cannot serve is a 503 to retry, and a defect is a 500 that names nothing.
// Only a single row can be not found: a list over the key's org has no such answer (the service
// spec's pagination rule 4, and the Read API document), so that case asks for one row only.
func TestReadStoreFailuresKeepTheErrorShape(t *testing.T) {
	list, one := "/v1/clients", "/v1/clients/"+uuid.NewString()
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
		paths  []string
	}{
		{"not found", problem.Fail(problem.NotFound, "client not found"), http.StatusNotFound, "not_found", []string{one}},
		{"no turn at the database", fmt.Errorf("list clients: %w", database.ErrBusy), http.StatusServiceUnavailable, "unavailable", []string{list, one}},
		{"deadline", fmt.Errorf("list clients: %w", context.DeadlineExceeded), http.StatusServiceUnavailable, "unavailable", []string{list, one}},
		{"defect", errors.New(`relation "clients" does not exist`), http.StatusInternalServerError, "internal_error", []string{list, one}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newReadFakes(t)
			f.reads.err = tc.err
			for _, path := range tc.paths {
				rec := serve(t, f.h, http.MethodGet, path, "ro", "")
				wantError(t, rec.Code, rec.Body.Bytes(), tc.status, tc.code)
				if strings.Contains(rec.Body.String(), "relation") {
					t.Errorf("%s: the answer names the cause: %s", path, rec.Body)
				}
				if tc.code == "unavailable" && rec.Header().Get("Retry-After") != "5" {
					t.Errorf("%s: Retry-After %q, want 5", path, rec.Header().Get("Retry-After"))
				}
			}
		})
	}
}

// Page parameters are checked before the store is asked: a malformed one costs no query.
func TestReadPageParametersAreCheckedBeforeTheStore(t *testing.T) {
	for _, tc := range []struct{ query, code string }{
		{"limit=abc", "invalid_parameter"},
		{"limit=0", "invalid_parameter"},
		{"limit=-99999999999999999999", "invalid_parameter"},
		{"store_id=nope", "invalid_parameter"},
		{"cursor_at=2026-01-01T00:00:00Z", "invalid_cursor"},
		{"cursor_at=yesterday&cursor_id=" + uuid.NewString(), "invalid_cursor"},
	} {
		f := newReadFakes(t)
		rec := serve(t, f.h, http.MethodGet, "/v1/clients?"+tc.query, "ro", "")
		wantError(t, rec.Code, rec.Body.Bytes(), http.StatusBadRequest, tc.code)
		if len(f.reads.queries) != 0 {
			t.Errorf("?%s reached the store: %+v", tc.query, f.reads.queries)
		}
	}
}

// The store is asked for the key's org whatever the query says, with a too-large limit clamped.
func TestReadPageQueryIsTheKeysOrg(t *testing.T) {
	f := newReadFakes(t)
	store := uuid.New()
	rec := serve(t, f.h, http.MethodGet, "/v1/clients?limit=99999999999999999999&store_id="+store.String()+"&org_id="+uuid.NewString(), "ro", "")
	if rec.Code != http.StatusOK || len(f.reads.queries) != 1 {
		t.Fatalf("got %d after %d store calls: %s", rec.Code, len(f.reads.queries), rec.Body)
	}
	q := f.reads.queries[0]
	if q.OrgID != f.org || q.StoreID == nil || *q.StoreID != store || q.Limit != paging.MaxLimit || q.Cursor != nil {
		t.Errorf("store asked %+v, want org %s, store %s, limit %d, no cursor", q, f.org, store, paging.MaxLimit)
	}
}

// The test event needs a read_write key; a read_only one is refused before anything is queued.
func TestTestEventScopeIsCheckedBeforeItIsQueued(t *testing.T) {
	f := newReadFakes(t)
	path := "/v1/webhooks/test/" + uuid.NewString()
	rec := serve(t, f.h, http.MethodPost, path, "", "")
	wantError(t, rec.Code, rec.Body.Bytes(), http.StatusUnauthorized, "missing_authorization")
	rec = serve(t, f.h, http.MethodPost, path, "pck_live_unknown", "")
	wantError(t, rec.Code, rec.Body.Bytes(), http.StatusUnauthorized, "invalid_api_key")
	rec = serve(t, f.h, http.MethodPost, path, "ro", "")
	wantError(t, rec.Code, rec.Body.Bytes(), http.StatusForbidden, "insufficient_scope")
	if f.hooks.tests != 0 {
		t.Fatalf("%d test events queued for refused keys", f.hooks.tests)
	}
	if rec = serve(t, f.h, http.MethodPost, path, "rw", ""); rec.Code != http.StatusOK || f.hooks.tests != 1 {
		t.Fatalf("read_write key: got %d, %d test events queued: %s", rec.Code, f.hooks.tests, rec.Body)
	}
}
