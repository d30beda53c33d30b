package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"wds/internal/workspace"
	"wds/models"
)

// Custom header values may be credentials: a member listing endpoints reads each header's name with
// its value blank, owners and admins (who edit them) read the values, and the row holds none of them.
func TestMembersReadHeaderNamesButNotTheirValues(t *testing.T) {
	e := newOpEnv(t, true)
	rpc := func(token, op string, p any) (int, map[string]any) {
		return e.call(http.MethodPost, "/admin/v1/rpc/"+op, token, p)
	}
	_, adminToken, err := workspace.NewService(e.db).CreateUser(context.Background(), e.org.ID, "admin@acme.test", models.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{"Authorization": "Bearer SUPERSECRET", "X-Tenant": "acme-tenant"}
	status, ep := rpc(e.ownerToken, "outbound_webhook_create", map[string]any{"p_url": "https://127.0.0.1/hook",
		"p_event_types": []string{"order.created"}, "p_headers": headers})
	if status != http.StatusCreated || ep["headers"].(map[string]any)["Authorization"] != "Bearer SUPERSECRET" {
		t.Fatalf("create %d %v", status, ep)
	}
	listed := func(token string) map[string]any {
		t.Helper()
		status, list := rpc(token, "outbound_webhook_list", nil)
		if status != http.StatusOK {
			t.Fatalf("list %d %v", status, list)
		}
		return list["rows"].([]any)[0].(map[string]any)["headers"].(map[string]any)
	}
	if got := listed(e.memberToken); len(got) != 2 || got["Authorization"] != "" || got["X-Tenant"] != "" {
		t.Fatalf("a member lists the headers as %v, want the names with blank values", got)
	}
	for _, token := range []string{e.ownerToken, adminToken} {
		if got := listed(token); got["Authorization"] != "Bearer SUPERSECRET" || got["X-Tenant"] != "acme-tenant" {
			t.Fatalf("a manager lists the headers as %v", got)
		}
	}
	if _, off := rpc(adminToken, "outbound_webhook_disable", map[string]any{"p_id": ep["id"]}); off["headers"].(map[string]any)["X-Tenant"] != "acme-tenant" {
		t.Fatalf("the disable answer to an admin: %v", off)
	}

	var row, names string
	var sealed []byte
	if err := e.db.Raw(`SELECT row_to_json(w)::text, headers::text, headers_sealed FROM webhook_endpoints w`).Row().Scan(&row, &names, &sealed); err != nil {
		t.Fatal(err)
	}
	var stored map[string]string
	if err := json.Unmarshal([]byte(names), &stored); err != nil || len(stored) != 2 || stored["Authorization"] != "" || len(sealed) == 0 {
		t.Fatalf("headers %s, %d sealed bytes: %v", names, len(sealed), err)
	}
	if strings.Contains(row, "SUPERSECRET") || strings.Contains(row, "acme-tenant") {
		t.Fatalf("the row holds a value in plaintext: %s", row)
	}
}
