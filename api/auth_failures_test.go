package api_test

import (
	"net/http"
	"testing"
	"time"

	"wds/internal/apikeys"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
)

// Every API counts refused credentials per client address: past 60 a minute the address is answered
// 429 rate_limited with Retry-After before its credential is looked up, a real credential from it
// included, while another address is served; a minute later the address is heard again. The read
// API's flood, end to end with the key cache, is cmd/wds's TestAFloodOfMadeUpKeysNeverReachesTheDatabase.
func TestRefusedCredentialsAreLimitedPerAddressOnEveryAPI(t *testing.T) {
	e := newIntEnv(t, "127.0.0.1/32") // the test's proxy: X-Forwarded-For names the client
	op, hash, err := secrets.NewAPIKey(workspace.OperatorTokenPrefix)
	if err != nil {
		t.Fatal(err)
	}
	e.db.Model(&models.User{}).Where("id = ?", e.owner.ID).Update("token_hash", hash)
	for _, api := range []struct {
		name, method, path, prefix, real string
		served                           int
	}{
		{"read", http.MethodGet, "/v1/vendors", apikeys.ReadKeyPrefix,
			mustReadKey(t, e.db, e.org.ID, e.owner.ID, models.ScopeReadOnly, nil), http.StatusOK},
		{"integration", http.MethodGet, "/integrations/v1/orders/by-external/x", apikeys.IntegrationKeyPrefix,
			e.mint(apikeys.NewIntegrationKey{}).token, http.StatusNotFound},
		{"operator", http.MethodGet, "/admin/v1/orgs/" + e.org.ID.String() + "/audit-log", workspace.OperatorTokenPrefix,
			op, http.StatusOK},
	} {
		flood, other := "198.51.100.7", "198.51.100.8"
		ask := func(from, token string) resp {
			t.Helper()
			return e.call(api.method, api.path, intKey{token: token}, "", map[string]string{"X-Forwarded-For": from})
		}
		madeUp := func() string {
			tok, _, err := secrets.NewAPIKey(api.prefix)
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		for i := range 60 {
			if r := ask(flood, madeUp()); r.status != http.StatusUnauthorized {
				t.Fatalf("%s API, made-up credential %d: %d, want 401", api.name, i+1, r.status)
			}
		}
		for _, token := range []string{madeUp(), api.real} {
			r := ask(flood, token)
			r.want(t, http.StatusTooManyRequests, "rate_limited")
			if r.header.Get("Retry-After") != "60" {
				t.Fatalf("%s API: Retry-After %q, want 60", api.name, r.header.Get("Retry-After"))
			}
		}
		if r := ask(other, api.real); r.status != api.served {
			t.Fatalf("%s API, a real credential from another address during the flood: %d %s", api.name, r.status, r.body)
		}
		if r := ask(other, madeUp()); r.status != http.StatusUnauthorized {
			t.Fatalf("%s API, a made-up credential from another address: %d, want 401", api.name, r.status)
		}
		e.clock.Add(2 * time.Minute)
		if r := ask(flood, api.real); r.status != api.served {
			t.Fatalf("%s API, the flooding address a minute later: %d %s", api.name, r.status, r.body)
		}
	}
}
