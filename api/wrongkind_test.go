package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"wds/internal/platform/secrets"
)

// A credential of another kind than the API takes is refused as an unknown one is (the same status
// and code), with a detail that says which kind the API takes, read from the credential's prefix.
func TestACredentialOfTheWrongKindSaysWhichKindTheAPITakes(t *testing.T) {
	e := newReadEnv(t)
	made := func(prefix string) string {
		token, _, err := secrets.NewAPIKey(prefix)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	cases := []struct {
		method, path, token, code string
		detail                    []string
	}{
		{http.MethodGet, "/v1/vendors", made("pck_int_"), "invalid_api_key", []string{"an integration key (pck_int_)", "a read key (pck_live_)"}},
		{http.MethodGet, "/v1/vendors", made("wds_op_"), "invalid_api_key", []string{"an operator token (wds_op_)", "a read key (pck_live_)"}},
		{http.MethodPost, "/integrations/v1/orders", e.key, "invalid_api_key", []string{"a read key (pck_live_)", "an integration key (pck_int_)"}},
		{http.MethodGet, "/admin/v1/orgs/" + e.org.ID.String() + "/read-keys", e.key, "invalid_token", []string{"a read key (pck_live_)", "an operator token (wds_op_)"}},
	}
	for _, c := range cases {
		status, body := e.do(c.method, c.path, c.token, nil)
		var answer struct{ Error, Detail string }
		_ = json.Unmarshal(body, &answer)
		if status != http.StatusUnauthorized || answer.Error != c.code {
			t.Errorf("%s %s with %.8s…: %d %s, want 401 %s", c.method, c.path, c.token, status, body, c.code)
			continue
		}
		for _, want := range c.detail {
			if !strings.Contains(answer.Detail, want) {
				t.Errorf("%s %s with %.8s…: detail %q does not name %s", c.method, c.path, c.token, answer.Detail, want)
			}
		}
	}
	// A made-up credential of the right kind says nothing more than before.
	if status, body := e.do(http.MethodGet, "/v1/vendors", made("pck_live_"), nil); status != http.StatusUnauthorized ||
		strings.Contains(string(body), "this API takes") {
		t.Errorf("an unknown read key: %d %s", status, body)
	}
}
