package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"wds/api"
	"wds/api/openapi/openapitest"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
	"wds/test/pgtest"
)

// FuzzOperatorInputs sends arbitrary bodies and query strings to the Operator API's key and list
// operations on the real router and database: bad input is a 4xx, never a 500.
func FuzzOperatorInputs(f *testing.F) {
	for _, s := range []string{`{}`, `{"scope":"read_write","name":"x"}`, `{"expires_at":"2030-01-01T00:00:00Z"}`,
		`{"store_id":"STORE","scopes":["orders:write"],"ip_allowlist":["::1/300"]}`,
		`{"store_id":"STORE","scopes":["orders:write"],"format":"nativestore","label":"x"}`,
		`{"scopes":[1]}`, `{"rate_limit":1e99}`, `{"name":"\u0000"}`, `[]`, `nul`, "limit=5&status=failed",
		"since=2026-01-01T00:00:00Z&until=0001-01-01T00:00:00Z", "cursor_at=9999-12-31T23:59:59Z&cursor_id=00000000-0000-0000-0000-000000000000"} {
		f.Add(s)
	}
	db := pgtest.New(f)
	ctx := context.Background()
	org, store, _ := mustOrg(f, db, "Fuzzed")
	_, token, err := workspace.NewService(db).CreateUser(ctx, org.ID, "fuzz@fuzzed.test", models.RoleOwner)
	if err != nil {
		f.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	box, _ := secrets.NewBox(secrets.GenerateKey())
	r, err := api.NewRouter(api.Deps{Services: apitest.Services(db, box, nil), Log: log})
	if err != nil {
		f.Fatal(err)
	}
	base := "/admin/v1/orgs/" + org.ID.String()
	f.Fuzz(func(t *testing.T, input string) {
		body := strings.ReplaceAll(input, "STORE", store.ID.String())
		withQuery := func(path string) *http.Request {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.URL.RawQuery = input // raw, as a client could send it
			return req
		}
		for _, req := range []*http.Request{
			httptest.NewRequest(http.MethodPost, base+"/read-keys", strings.NewReader(body)),
			httptest.NewRequest(http.MethodPost, base+"/integration-keys", strings.NewReader(body)),
			withQuery(base + "/deliveries"),
			withQuery(base + "/audit-log"),
		} {
			req.Header.Set("Authorization", "Bearer "+token)
			rec := openapitest.Serve(t, r, req)
			if rec.Code >= 500 {
				t.Fatalf("%s %s with %q: %d %s", req.Method, req.URL.Path, input, rec.Code, rec.Body)
			}
		}
	})
}
